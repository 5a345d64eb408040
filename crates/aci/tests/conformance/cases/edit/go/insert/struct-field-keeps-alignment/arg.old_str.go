	Email string `json:"email"`
