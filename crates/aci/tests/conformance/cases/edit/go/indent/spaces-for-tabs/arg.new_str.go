        if errors.Is(err, ErrNotFound) {
            w.Header().Set("Cache-Control", "no-store")
            http.Error(w, err.Error(), http.StatusNotFound)
            return
        }
