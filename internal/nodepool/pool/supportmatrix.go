package pool

import (
	"strings"
)

// JoinAnd lists s as "a, b and c".
func JoinAnd(s []string) string {
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}
