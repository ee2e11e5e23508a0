// Package redact keeps credentials out of everything the function writes
// that a person or a log reads: messages, conditions, events, status and log
// lines. The only credential the function can come across in text is a
// URL's userinfo (https://user:password@host/): the URL grammar refuses it in
// what the function composes, but a value that fails the grammar is quoted
// back, an observed object made by someone else can carry one, and CDI's
// importer quotes its endpoint in its errors (pkg/importer/http-datasource.go
// NewHTTPDataSource, "unable to parse endpoint %q").
package redact

import (
	"regexp"
	"strings"
)

// Mask replaces a URL's userinfo.
const Mask = "REDACTED"

// userinfo matches a scheme, "://" and the userinfo up to its last "@"
// before the host: everything up to the first "/", "?", "#", quote or
// whitespace that contains an "@". A scheme is any RFC 3986 scheme, so
// s3:// and docker:// endpoints are covered as well as http(s).
var userinfo = regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.\-]*://)([^/?#\s"'@]*@)+`)

// bareUserinfo matches a credential written without a scheme before a
// host and a path, as in an image reference a tenant or an operator writes
// (installerRepository "user:token@registry.example.com/talos/installer"):
// at the start of a word, a user, ":", a password and "@", then a host (and
// port) and "/". The ":" and the "/" keep out what is no credential: a
// digest ("repo@sha256:...") has no ":" before its "@", and an address
// ("mailto:someone@example.com") no path after its host.
var bareUserinfo = regexp.MustCompile(`(^|[\s"'=(\[,])([^\s"'/@:]+:[^\s"'/@]*@)([A-Za-z0-9.\-]+(:[0-9]+)?/)`)

// Text masks the userinfo of every URL in s, and of every reference that
// carries one without a scheme; the rest of s is unchanged.
func Text(s string) string {
	if !strings.Contains(s, "@") {
		return s
	}
	s = userinfo.ReplaceAllString(s, "${1}"+Mask+"@")
	return bareUserinfo.ReplaceAllString(s, "${1}"+Mask+"@${3}")
}
