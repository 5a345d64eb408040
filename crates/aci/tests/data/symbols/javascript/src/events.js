// A minimal event bus with listener limits.

export const MAX_LISTENERS = 10;
export const DEFAULT_EVENT = "change";
let defaultBus = null;

/**
 * Keeps listeners per event name and calls them on emit.
 */
export class EventBus {
  constructor(limit = MAX_LISTENERS) {
    this.limit = limit;
    this.listeners = new Map();
  }

  get size() {
    let total = 0;
    for (const list of this.listeners.values()) {
      total += list.length;
    }
    return total;
  }

  on(name, listener) {
    const list = this.listeners.get(name) || [];
    if (list.length >= this.limit) {
      throw new Error("too many listeners for " + name);
    }
    list.push(listener);
    this.listeners.set(name, list);
    return () => this.off(name, listener);
  }

  off(name, listener) {
    const list = this.listeners.get(name) || [];
    this.listeners.set(
      name,
      list.filter((l) => l !== listener),
    );
  }

  emit(name = DEFAULT_EVENT, ...args) {
    for (const listener of this.listeners.get(name) || []) {
      listener(...args);
    }
  }

  static shared() {
    if (defaultBus === null) {
      defaultBus = new EventBus();
    }
    return defaultBus;
  }
}

/** Calls fn for the first emit of name only; "once" in a string is not a reference. */
export const once = (bus, name, fn) => {
  const stop = bus.on(name, (...args) => {
    stop();
    fn(...args);
  });
  return stop;
};

export const noop = function () {};

export function* iterate(bus) {
  for (const [name, list] of bus.listeners) {
    yield [name, list.length];
  }
}

export function createBus(options = {}) {
  const RETRY_LIMIT = 3;

  function clamp(n) {
    return Math.max(1, Math.min(n, RETRY_LIMIT * MAX_LISTENERS));
  }

  return new EventBus(clamp(options.limit || MAX_LISTENERS));
}
