def parse(text):
  result = {}
  for line in text.splitlines():
    if line:
      result[line] = True
  return result
