        http.Error(w, err.Error(), http.StatusInternalServerError)
