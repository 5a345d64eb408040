function render(list) {
  const out = [];
  // ...
  for (const item of list) {
    out.push(`<li>${item.name}</li>`);
  }
  return `<ul>${out.join("")}</ul>`;
}

module.exports = { render };
