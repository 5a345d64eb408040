const express = require("express");

const app = express();
const port = process.env.PORT || 3000;

function parseLimit(value) {
  const n = parseInt(value, 10);
  if (Number.isNaN(n) || n < 1) return 20;
  return Math.min(n, 100);
}

app.get("/items", (req, res) => {
  const limit = parseLimit(req.query.limit);
  res.json({ items: [], limit });
});

app.get("/health", (req, res) => {
  res.send("ok");
});

app.listen(port, () => {
  console.log(`listening on ${port}`);
});
