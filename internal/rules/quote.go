package rules

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/cozystack/function-worker-image/internal/redact"
)

// maxQuoted bounds a value quoted in a message.
const maxQuoted = 64

// Quoted is v cut to maxQuoted bytes on a rune boundary, so that a message
// quoting a bad value is short and always valid UTF-8, with a URL's userinfo
// masked: a value refused for carrying credentials must not echo them.
func Quoted(v string) string {
	v = redact.Text(v)
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
		if p := printable(e.Field); p != e.Field {
			escaped := *e
			escaped.Field = p
			e = &escaped
		}
		s := e.Error()
		if !seen[s] {
			seen[s] = true
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, "; ")
}

// printable is a field path as a message may carry it: a path with a key
// the user wrote (a registry mirror's host, a pool's name) that holds a
// newline or another unprintable rune is escaped as the value beside it is
// (field.Error quotes a string value with %q), so that it cannot break the
// message's line or forge a second one.
func printable(path string) string {
	if !strings.ContainsFunc(path, func(r rune) bool { return !strconv.IsPrint(r) }) {
		return path
	}
	q := strconv.Quote(path)
	return q[1 : len(q)-1]
}

// bounded is the rule of a required string of at most most bytes that must
// match re: required is the Required detail, example the fix of one too
// long, invalid the detail of one that does not match.
func bounded(path *field.Path, v string, most int, re *regexp.Regexp, required, example, invalid string) field.ErrorList {
	switch {
	case v == "":
		return field.ErrorList{field.Required(path, required)}
	case len(v) > most:
		return field.ErrorList{tooLong(path, v, most, example)}
	case !re.MatchString(v):
		return field.ErrorList{field.Invalid(path, Quoted(v), invalid)}
	}
	return nil
}
