if u.Name == "" {
    return errors.New("name is required")
}
