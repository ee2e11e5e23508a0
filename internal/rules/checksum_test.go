package rules

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestChecksum(t *testing.T) {
	hex64 := strings.Repeat("0123456789abcdef", 4)
	cases := map[string]struct {
		reason string
		v      string
		ok     bool
	}{
		"Empty":             {reason: "No checksum is none.", v: "", ok: true},
		"SHA256":            {reason: "sha256 with 64 lowercase hex digits is taken.", v: "sha256:" + hex64, ok: true},
		"SHA512":            {reason: "sha512 with 128 lowercase hex digits is taken.", v: "sha512:" + hex64 + hex64, ok: true},
		"MD5Refused":        {reason: "md5 is too weak to pin an image by.", v: "md5:0123456789abcdef0123456789abcdef"},
		"UppercaseRefused":  {reason: "CDI compares lowercase hex.", v: "sha256:" + strings.ToUpper(hex64)},
		"ShortRefused":      {reason: "A truncated digest is refused.", v: "sha256:" + hex64[:63]},
		"NoAlgorithm":       {reason: "A bare digest names no algorithm.", v: hex64},
		"SHA512WrongLength": {reason: "sha512 needs 128 digits.", v: "sha512:" + hex64},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			errs := Checksum(field.NewPath("spec", "images").Index(0).Child("checksum"), tc.v)
			if (len(errs) == 0) != tc.ok {
				t.Errorf("%s\nChecksum(%q) = %v, want ok=%v", tc.reason, tc.v, errs, tc.ok)
			}
		})
	}
}
