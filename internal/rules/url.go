package rules

import (
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The one grammar of every URL the function writes into a composed object:
// an Image Factory base URL (a DataVolume's HTTP source, and the host of the
// default installer) and a registry mirror endpoint (a Talos machine
// config). It is closed: only what is listed passes, so nothing a YAML
// document, a shell or an HTTP client would read as syntax can reach them.
//
//	url      = ("http" | "https") "://" host [":" port] path
//	host     = dns-name | ipv4 | "[" ipv6 "]"
//	dns-name = *(label ".") last-label   ; RFC 1123 labels, the last one
//	                                     ; starting with a letter, so that
//	                                     ; 1.2.3.999 is not a name
//	port     = 1..65535, no leading zero
//	path     = *("/" *pchar)              ; RFC 3986 unreserved, "!*+,;=:@",
//	                                     ; and %XX escapes
//
// Refused, by construction: userinfo (user@), a query or fragment (the
// artifact path is appended to a factory URL), quotes, whitespace and every
// control character, NEL, U+2028/U+2029, bidi controls and any other
// non-ASCII character (write an IDN host in its xn-- form), $, backtick, <>,
// {}, |, \ and ^.
const (
	dnsLabel  = `[A-Za-z0-9]([-A-Za-z0-9]{0,61}[A-Za-z0-9])?`
	lastLabel = `[A-Za-z]([-A-Za-z0-9]{0,61}[A-Za-z0-9])?`
	dnsName   = `(` + dnsLabel + `\.)*` + lastLabel
	octet     = `(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])`
	ipv4      = octet + `(\.` + octet + `){3}`
	h16       = `[0-9A-Fa-f]{1,4}`
	// ipv6 is RFC 4291's text forms without the embedded-IPv4 and zone
	// forms, which no registry or factory needs in a URL.
	ipv6 = `((` + h16 + `:){7}` + h16 +
		`|(` + h16 + `:){1,7}:` +
		`|(` + h16 + `:){1,6}:` + h16 +
		`|(` + h16 + `:){1,5}(:` + h16 + `){1,2}` +
		`|(` + h16 + `:){1,4}(:` + h16 + `){1,3}` +
		`|(` + h16 + `:){1,3}(:` + h16 + `){1,4}` +
		`|(` + h16 + `:){1,2}(:` + h16 + `){1,5}` +
		`|` + h16 + `:(:` + h16 + `){1,6}` +
		`|:((:` + h16 + `){1,7}|:))`
	host  = `(` + dnsName + `|` + ipv4 + `|\[` + ipv6 + `\])`
	port  = `([1-9][0-9]{0,3}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5])`
	pchar = `([A-Za-z0-9._~!*+,;=:@-]|%[0-9A-Fa-f]{2})`
	path  = `(/` + pchar + `*)*`
)

// URLPattern is the grammar as one regular expression, the same in the code
// and in the XRD schemas (Go's RE2, which the API server's OpenAPI pattern
// validation also runs).
const URLPattern = `^https?://` + host + `(:` + port + `)?` + path + `$`

// RegistryHostPattern is a registry mirror's key: a host[:port] in the same
// grammar, or * for every registry.
const RegistryHostPattern = `^(\*|` + host + `(:` + port + `)?)$`

const (
	// MaxURLLength bounds a URL; the XRDs carry it as maxLength.
	MaxURLLength = 512
	// maxHostLength is DNS's limit on a name (RFC 1035 §2.3.4), which the
	// pattern cannot count.
	maxHostLength = 253
)

var (
	urlGrammar   = regexp.MustCompile(URLPattern)
	registryHost = regexp.MustCompile(RegistryHostPattern)
)

// FactoryURL checks an Image Factory base URL.
func FactoryURL(path *field.Path, v string) field.ErrorList {
	return checkURL(path, v, "an Image Factory base URL such as https://factory.talos.dev: http(s), a DNS name or IP address, an optional port and path, no user, query or fragment (the image path is appended to it)")
}

// MirrorEndpoint checks a registry mirror endpoint.
func MirrorEndpoint(path *field.Path, v string) field.ErrorList {
	return checkURL(path, v, "a registry mirror endpoint such as https://mirror.example.com:5000: http(s), a DNS name or IP address, an optional port and path, no user, query or fragment")
}

func checkURL(path *field.Path, v, want string) field.ErrorList {
	switch {
	case v == "":
		return field.ErrorList{field.Required(path, "set "+want)}
	case len(v) > MaxURLLength:
		return field.ErrorList{tooLong(path, v, MaxURLLength, "write "+want)}
	case !urlGrammar.MatchString(v):
		return field.ErrorList{field.Invalid(path, Quoted(v), "is not "+want)}
	}
	if h := urlHost(v); len(h) > maxHostLength {
		return field.ErrorList{field.Invalid(path, Quoted(v), "names a host longer than 253 characters, which DNS cannot resolve")}
	}
	return nil
}

// MirrorHost checks a registry mirror's key.
func MirrorHost(path *field.Path, v string) field.ErrorList {
	if len(v) > maxHostLength+6 || !registryHost.MatchString(v) {
		return field.ErrorList{field.Invalid(path, Quoted(v), "is not a registry host[:port] such as docker.io or registry.example.com:5000, or * for every registry")}
	}
	return nil
}

// urlHost is the host[:port] part's host of an accepted URL.
func urlHost(v string) string {
	rest := v[strings.Index(v, "://")+3:]
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		rest = rest[:i]
	}
	if strings.HasPrefix(rest, "[") {
		return rest[:strings.IndexByte(rest, ']')+1]
	}
	if i := strings.IndexByte(rest, ':'); i >= 0 {
		rest = rest[:i]
	}
	return rest
}
