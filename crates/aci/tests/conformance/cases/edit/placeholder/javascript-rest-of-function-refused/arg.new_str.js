function render(list, cls) {
  // ... rest of the function unchanged ...
  return `<ul class="${cls}">${out.join("")}</ul>`;
}
