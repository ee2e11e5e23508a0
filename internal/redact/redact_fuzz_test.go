package redact

import "testing"

func FuzzText(f *testing.F) {
	for _, s := range []string{"https://u:p@h/", "x://@", "a://b@c@d/e", "https://h/p@q", "u:p@h/r", "x u:p@h:1/r", "https://a:b@u:p@h/r"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := Text(s)
		if Text(out) != out {
			t.Fatalf("Text is not idempotent: %q -> %q -> %q", s, out, Text(out))
		}
		if m := userinfo.FindStringSubmatch(out); m != nil && m[2] != Mask+"@" {
			t.Fatalf("Text(%q) = %q still holds userinfo %q", s, out, m[2])
		}
		if m := bareUserinfo.FindStringSubmatch(out); m != nil {
			t.Fatalf("Text(%q) = %q still holds userinfo %q", s, out, m[2])
		}
	})
}
