package rules

import (
	"net/url"
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
	if why := pathAmbiguity(urlPath(v)); why != "" {
		return field.ErrorList{field.Invalid(path, Quoted(v), why+"; write the path without it, as the server serves it (e.g. https://factory.example/talos rather than https://factory.example/x/../talos)")}
	}
	return nil
}

// pathAmbiguity says why a URL path the grammar admits still does not name
// one place, or "" if it does. The image path is appended to a factory
// URL, and the disk URL is fetched by CDI's importer (Go's net/http, which
// sends the path as written) through whatever proxies and servers stand
// in front of the factory; each of those may resolve dot segments (RFC
// 3986 §5.2.4) and decode escapes, and they do not agree on when:
//   - a dot segment, "." or "..", written plainly or percent-encoded in
//     any case (%2e%2e, %2E%2e, .%2e), walks the path up a level at
//     whichever hop resolves it, so the URL names another path than the
//     one written (the checksum and the status then name something else);
//   - an escape of an escape (%252e%252e) is the same trap one decoding
//     later, at a hop that decodes twice: the path is decoded until it no
//     longer changes and every stage is checked;
//   - an encoded slash or backslash (%2f, %5c) is a path separator to a
//     hop that decodes it (nginx's merge and normalisation, IIS) and part
//     of a segment to one that does not (Go, Apache's default refuses it
//     with 404), so the same URL names two paths; no factory or registry
//     path needs one, so it is refused rather than guessed.
//
// The XRD pattern cannot say this (RE2 has no look-ahead), so, like the
// host's length, the code checks it beyond the pattern.
func pathAmbiguity(p string) string {
	for range 4 { // %25 nests at most this deep before the bound below
		for _, seg := range strings.Split(p, "/") {
			if seg == "." || seg == ".." {
				return "has a dot segment (" + seg + ", plain or percent-encoded) in its path, which walks the path up at whichever server or proxy resolves it, so the URL would fetch another path than the one written"
			}
		}
		lower := strings.ToLower(p)
		if strings.Contains(lower, "%2f") || strings.Contains(lower, "%5c") {
			return "has an encoded slash or backslash (%2f, %5c) in its path, which one server reads as a separator and another as part of a name, so the URL names no one path"
		}
		d, err := url.PathUnescape(p)
		if err != nil || d == p {
			return ""
		}
		p = d
	}
	return "nests percent-escapes more than three deep in its path (%25...), which no server serves and only hides what it decodes to"
}

// urlPath is the path of an accepted URL: from the first '/' after the
// authority, or "".
func urlPath(v string) string {
	rest := v[strings.Index(v, "://")+3:]
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		return rest[i:]
	}
	return ""
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
