from util import double

print(double(2))
