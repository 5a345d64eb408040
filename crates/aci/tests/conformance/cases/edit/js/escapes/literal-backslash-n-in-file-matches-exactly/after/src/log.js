function formatLine(level, msg) {
  return `${new Date().toISOString()} [${level}] ${msg}\n`;
}

function write(stream, level, msg) {
  stream.write(formatLine(level, msg));
}

module.exports = { formatLine, write };
