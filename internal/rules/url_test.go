package rules

import (
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestURLGrammar(t *testing.T) {
	cases := map[string]struct {
		reason string
		url    string
		ok     bool
	}{
		"Factory":               {"The public factory.", "https://factory.talos.dev", true},
		"TrailingSlash":         {"A trailing slash is an empty path segment.", "https://factory.talos.dev/", true},
		"PortAndPath":           {"Mirrors may carry a port and a path.", "http://mirror.internal:8080/talos/", true},
		"SingleLabelHost":       {"An in-cluster short name is a host.", "http://factory:8080", true},
		"IPv4":                  {"An IP address is a host.", "http://10.0.0.1:5000", true},
		"IPv6":                  {"A bracketed IPv6 address is a host.", "https://[fd00::1]:5000/v2", true},
		"IPv6Loopback":          {"::1 is an IPv6 address.", "http://[::1]", true},
		"PercentEscape":         {"A well-formed escape is a path character.", "https://f.example/a%20b", true},
		"HighestPort":           {"65535 is a port.", "https://f.example:65535", true},
		"Punycode":              {"An IDN host is written in its xn-- form.", "https://xn--80ak6aa92e.example", true},
		"Empty":                 {"Empty is no URL.", "", false},
		"FTP":                   {"Only http(s).", "ftp://factory.talos.dev", false},
		"JavaScript":            {"Only http(s).", "javascript:alert(1)", false},
		"Userinfo":              {"Credentials never ride in a URL that lands in a manifest.", "https://user:pw@factory.talos.dev", false},
		"Query":                 {"The artifact path is appended; a query would swallow it.", "https://factory.talos.dev?q=1", false},
		"EmptyQuery":            {"A bare ? too.", "https://factory.talos.dev?", false},
		"Fragment":              {"A fragment would swallow the artifact path.", "https://factory.talos.dev#frag", false},
		"NoHost":                {"A URL without a host can never be fetched.", "https:///path", false},
		"BadEscape":             {"An escape that is not two hex digits.", "https://f.example/%zz", false},
		"PortZero":              {"Port 0 is not a port.", "https://f.example:0", false},
		"PortTooHigh":           {"65536 is not a port.", "https://f.example:65536", false},
		"PortLeadingZero":       {"A port has no leading zero.", "https://f.example:08080", false},
		"EmptyPort":             {"A colon without a port.", "https://f.example:", false},
		"NumericLastLabel":      {"1.2.3.999 is neither an IPv4 address nor a name.", "http://1.2.3.999", false},
		"LabelStartsWithHyphen": {"RFC 1123 labels start with a letter or digit.", "https://-f.example", false},
		"EmptyLabel":            {"f..example has an empty label.", "https://f..example", false},
		"TrailingDot":           {"An absolute name with a trailing dot is refused.", "https://f.example.", false},
		"BadIPv6":               {"Not an IPv6 address.", "https://[::::]", false},
		"ZoneID":                {"A zone ID has no meaning off the host.", "https://[fe80::1%25eth0]", false},
		"Space":                 {"Whitespace.", "https://factory talos.dev", false},
		"Newline":               {"A header-injection newline.", "https://factory.talos.dev\nHost: evil", false},
		"Tab":                   {"A control character.", "https://f.example/\tx", false},
		"NEL":                   {"U+0085 is a YAML line break.", "https://f.example/\u0085x", false},
		"LineSeparator":         {"U+2028 is a line break to JavaScript and YAML.", "https://f.example/\u2028x", false},
		"ParagraphSeparator":    {"U+2029 too.", "https://f.example/\u2029x", false},
		"BidiOverride":          {"A bidi control can make a URL read as another.", "https://f.example/\u202ex", false},
		"CyrillicHost":          {"A non-ASCII look-alike host.", "https://fаctory.talos.dev", false},
		"Dollar":                {"Shell expansion.", "https://f.example/${HOME}", false},
		"Backtick":              {"Shell substitution.", "https://f.example/`id`", false},
		"DoubleQuote":           {"A quote would end a YAML scalar.", `https://f.example/"x`, false},
		"SingleQuote":           {"A single quote too.", "https://f.example/'x", false},
		"AngleBrackets":         {"Markup.", "https://f.example/<x>", false},
		"Braces":                {"YAML flow syntax.", "https://f.example/{a}", false},
		"Pipe":                  {"A shell pipe.", "https://f.example/a|b", false},
		"Backslash":             {"A backslash reads as a path separator to some clients.", `https://f.example\x`, false},
		"UppercaseScheme":       {"The scheme is written in lowercase.", "HTTPS://f.example", false},
		"TooLong":               {"A URL is bounded.", "https://f.example/" + strings.Repeat("a", MaxURLLength), false},
		"HostTooLong":           {"DNS names are at most 253 characters.", "https://" + strings.Repeat("a.", 130) + "example", false},
		"DotDotSegment":         {"A dot segment walks the path up at whichever hop resolves it.", "https://f.example/talos/../x", false},
		"DotSegment":            {"A single dot is a dot segment too.", "https://f.example/./talos", false},
		"TrailingDotDot":        {"At the end of the path, where the image path is appended.", "https://f.example/talos/..", false},
		"EncodedDotDot":         {"%2e%2e is .. once decoded.", "https://f.example/talos/%2e%2e/x", false},
		"EncodedDotDotMixed":    {"Escapes are case-insensitive.", "https://f.example/%2E%2e/x", false},
		"HalfEncodedDotDot":     {".%2e is .. too.", "https://f.example/.%2E/x", false},
		"EncodedDot":            {"%2e alone is a dot segment.", "https://f.example/%2e/x", false},
		"DoubleEncodedDotDot":   {"%252e%252e is .. at a hop that decodes twice.", "https://f.example/%252e%252e/x", false},
		"EncodedSlash":          {"%2f is a separator to one server and a name to another.", "https://f.example/a%2fb", false},
		"EncodedSlashUpper":     {"In either case.", "https://f.example/a%2Fb", false},
		"EncodedBackslash":      {"%5c is a separator to IIS.", "https://f.example/a%5cb", false},
		"DoubleEncodedSlash":    {"%252f is %2f one decoding later.", "https://f.example/a%252f..", false},
		"DeeplyNestedEscape":    {"Escapes of escapes of escapes hide what they decode to.", "https://f.example/%25252541", false},
		"DotsInsideASegment":    {"Dots inside a name are not dot segments.", "https://f.example/talos.v1/..x/a..", true},
		"EncodedDotInsideName":  {"An escaped dot inside a name is a name.", "https://f.example/a%2eb", true},
		"DoubleEncodedSpace":    {"An escape of an escape that decodes to no dot segment is a path.", "https://f.example/a%2520b", true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			for rule, check := range map[string]func(*field.Path, string) field.ErrorList{"FactoryURL": FactoryURL, "MirrorEndpoint": MirrorEndpoint} {
				errs := check(field.NewPath("spec", "imageFactoryURL"), tc.url)
				if got := len(errs) == 0; got != tc.ok {
					t.Errorf("%s\n%s(%q) ok = %t, want %t (%v)", tc.reason, rule, tc.url, got, tc.ok, errs)
				}
				for _, e := range errs {
					if e.Field != "spec.imageFactoryURL" {
						t.Errorf("%s: the error names %q, not the field checked", rule, e.Field)
					}
				}
			}
		})
	}
}

// TestURLPathAmbiguityMessage pins what a dot segment's refusal says: the
// field, the value and the fix.
func TestURLPathAmbiguityMessage(t *testing.T) {
	cases := map[string]struct {
		reason string
		url    string
		want   string
	}{
		"EncodedDotDot": {
			reason: "%2e%2e is named as a dot segment, decoded.",
			url:    "https://f.example/%2e%2e/x",
			want:   `spec.imageFactoryURL: Invalid value: "https://f.example/%2e%2e/x": has a dot segment (.., plain or percent-encoded) in its path, which walks the path up at whichever server or proxy resolves it, so the URL would fetch another path than the one written; write the path without it, as the server serves it (e.g. https://factory.example/talos rather than https://factory.example/x/../talos)`,
		},
		"EncodedSlash": {
			reason: "%2f is named as an encoded slash.",
			url:    "https://f.example/a%2Fb",
			want:   `spec.imageFactoryURL: Invalid value: "https://f.example/a%2Fb": has an encoded slash or backslash (%2f, %5c) in its path, which one server reads as a separator and another as part of a name, so the URL names no one path; write the path without it, as the server serves it (e.g. https://factory.example/talos rather than https://factory.example/x/../talos)`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Message(FactoryURL(field.NewPath("spec", "imageFactoryURL"), tc.url))); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestXRDPatternIsTheGrammar pins that the pattern the XRDs carry is the one
// the code runs: a URL the API server admits is a URL the function accepts,
// except for the two bounds a pattern cannot count (total and host length),
// which the XRDs carry as maxLength and the code checks, and the dot
// segments and encoded slashes of a path, which RE2 cannot exclude
// (pathAmbiguity).
func TestXRDPatternIsTheGrammar(t *testing.T) {
	re := regexp.MustCompile(URLPattern)
	for _, u := range []string{"https://factory.talos.dev", "https://[::1]:5000", "https://a?b", "https://a b"} {
		code := len(FactoryURL(field.NewPath("u"), u)) == 0
		if re.MatchString(u) != code {
			t.Errorf("%q: pattern says %t, code says %t", u, re.MatchString(u), code)
		}
	}
}

func TestMirrorHost(t *testing.T) {
	for host, ok := range map[string]bool{
		"docker.io": true, "registry.example.com:5000": true, "*": true, "10.0.0.1:5000": true, "[fd00::1]:5000": true,
		"": false, "docker.io/library": false, "https://docker.io": false, "a b": false, "**": false, "docker.io:0": false,
	} {
		if got := len(MirrorHost(field.NewPath("k"), host)) == 0; got != ok {
			t.Errorf("MirrorHost(%q) ok = %t, want %t", host, got, ok)
		}
	}
}

func TestFactoryURLNeverEchoesCredentials(t *testing.T) {
	for _, v := range []string{
		"https://admin:s3cr3t@factory.internal",
		"http://s3cr3t@factory.internal:8080/talos",
		"https://user:s3cr3t@[fd00::1]/x",
	} {
		errs := FactoryURL(field.NewPath("spec", "imageFactoryURL"), v)
		if len(errs) == 0 {
			t.Fatalf("FactoryURL(%q) took a URL with userinfo", v)
		}
		if msg := Message(errs); strings.Contains(msg, "s3cr3t") {
			t.Errorf("FactoryURL(%q) echoes the credential: %s", v, msg)
		}
	}
}
