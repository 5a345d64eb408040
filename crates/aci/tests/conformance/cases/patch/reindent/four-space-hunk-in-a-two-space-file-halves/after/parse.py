def parse(text):
  result = {}
  text = text.strip()
  for line in text.splitlines():
    if line:
      result[line] = True
  return result
