package rules

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// maxQuoted bounds a value quoted in a message.
const maxQuoted = 64

// Quoted is v cut to maxQuoted bytes on a rune boundary, so that a message
// quoting a bad value is short and always valid UTF-8.
func Quoted(v string) string {
	if len(v) <= maxQuoted {
		return v
	}
	cut := maxQuoted
	for cut > 0 && !isRuneStart(v[cut]) {
		cut--
	}
	return strings.ToValidUTF8(v[:cut], "") + "..."
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// tooLong is field.TooLong that still quotes the value: apimachinery's
// TooLong prints no value, and a message must name what was written.
func tooLong(path *field.Path, v string, most int, fix string) *field.Error {
	return field.Invalid(path, Quoted(v), fmt.Sprintf("is %d bytes, more than %d; %s", len(v), most, fix))
}

// Message is errs as one sentence list, in order, duplicates dropped: the
// text of a fatal result. apimachinery's aggregate wraps several errors in
// brackets, which reads badly in a condition.
func Message(errs field.ErrorList) string {
	seen := map[string]bool{}
	parts := make([]string, 0, len(errs))
	for _, e := range errs {
		s := e.Error()
		if !seen[s] {
			seen[s] = true
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, "; ")
}
