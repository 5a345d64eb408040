def show(rows):
    out = "\n".join(rows)
    print(out + "\n")
    return out.strip()
