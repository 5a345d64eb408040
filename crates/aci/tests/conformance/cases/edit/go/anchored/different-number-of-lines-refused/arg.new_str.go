func FetchUser(s Store, w http.ResponseWriter, id int) {
	u, err := s.Get(id)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
