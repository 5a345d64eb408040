		writeError(w, err)
