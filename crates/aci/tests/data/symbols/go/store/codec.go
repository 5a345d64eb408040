package store

import (
	"fmt"
	"strconv"
	"strings"
)

// Config holds the settings read by ParseConfig.
type Config struct {
	Addr string
	TTL  int
}

// Parse reads one "key=value:kind" line; it calls parse for the kind.
func Parse(line string) (string, Entry, error) {
	key, rest, ok := strings.Cut(line, "=")
	if !ok {
		return "", Entry{}, fmt.Errorf("no '=' in %q", line)
	}
	value, kindName, _ := strings.Cut(rest, ":")
	kind, err := parse(kindName)
	if err != nil {
		return "", Entry{}, err
	}
	return key, Entry{Value: value, Kind: kind}, nil
}

// parse turns a kind name into a Kind.
func parse(name string) (Kind, error) {
	switch name {
	case "", "string":
		return KindString, nil
	case "number":
		return KindNumber, nil
	case "list":
		return KindList, nil
	}
	return 0, fmt.Errorf("unknown kind %q", name)
}

// ParseConfig reads "addr" and "ttl" lines.
func ParseConfig(
	text string,
	defaults Config,
) (Config, error) {
	cfg := defaults
	for _, line := range strings.Split(text, "\n") {
		key, value, ok := strings.Cut(strings.TrimSpace(line), " ")
		if !ok {
			continue
		}
		switch key {
		case "addr":
			cfg.Addr = value
		case "ttl":
			n, err := strconv.Atoi(value)
			if err != nil {
				return cfg, err
			}
			cfg.TTL = n
		}
	}
	return cfg, nil
}
