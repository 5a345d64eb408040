	Email string `json:"email"`
	Admin bool   `json:"admin"`
