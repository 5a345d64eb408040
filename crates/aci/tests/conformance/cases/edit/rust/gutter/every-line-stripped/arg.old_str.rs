    41|impl fmt::Display for Settings {
    42|    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
