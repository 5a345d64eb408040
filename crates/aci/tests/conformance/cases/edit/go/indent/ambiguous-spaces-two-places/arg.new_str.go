        writeError(w, err)
