package hook

// ValidName reports whether s can name an environment variable: letters, digits and
// _, not starting with a digit (config's env= option checks its names with it).
func ValidName(s string) bool { return validName(s) }
