import { EventBus, createBus, once, DEFAULT_EVENT } from "./events.js";
import { Formatter, formatDate, parseQuery } from "./format.mjs";

const LOG_LEVEL = "info";

class Logger {
  constructor(bus, formatter = Formatter.plain()) {
    this.bus = bus;
    this.formatter = formatter;
    this.lines = [];
  }

  log(message) {
    const line = this.formatter.format(LOG_LEVEL, message);
    this.lines.push(line);
    this.bus.emit(DEFAULT_EVENT, line);
  }
}

function logger(bus) {
  return new Logger(bus, new Formatter(formatDate(new Date())));
}

export async function main(query) {
  const options = parseQuery(query);
  const bus = options.shared ? EventBus.shared() : createBus(options);
  const log = logger(bus);
  once(bus, DEFAULT_EVENT, (line) => console.log(line));
  log.log("started with " + Object.keys(options).length + " options");
  return log;
}
