import { Entity, Filter, Store, UserId } from "./models";

function sealed(target: Function): void {
  Object.seal(target);
  Object.seal(target.prototype);
}

function logged(_target: object, key: string, descriptor: PropertyDescriptor): void {
  const original = descriptor.value;
  descriptor.value = function (this: unknown, ...args: unknown[]) {
    console.debug("call", key);
    return original.apply(this, args);
  };
}

export abstract class Repository<T extends Entity> implements Store<T> {
  protected items = new Map<UserId, T>();

  get(id: UserId): T | undefined {
    return this.items.get(id);
  }

  @logged
  put(item: T): void {
    this.items.set(item.id, item);
  }

  findAll(filter: Filter<T> = () => true): T[] {
    return [...this.items.values()].filter(filter);
  }

  find(filter: Filter<T>): T | undefined {
    return this.findAll(filter)[0];
  }
}

@sealed
export class InMemoryRepo<T extends Entity> extends Repository<T> {
  constructor(seed: T[] = []) {
    super();
    for (const item of seed) {
      this.put(item);
    }
  }

  findById(id: UserId): T | undefined {
    return this.get(id);
  }
}
