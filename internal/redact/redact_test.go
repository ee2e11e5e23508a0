package redact

import "testing"

func TestText(t *testing.T) {
	cases := map[string]struct {
		reason string
		in     string
		want   string
	}{
		"PlainURLUnchanged": {
			reason: "A URL without userinfo is left as it is.",
			in:     "https://factory.talos.dev/image/abc/v1.13.6/openstack-amd64.raw.xz",
			want:   "https://factory.talos.dev/image/abc/v1.13.6/openstack-amd64.raw.xz",
		},
		"UserAndPassword": {
			reason: "Both the user and the password are masked.",
			in:     `spec.imageFactoryURL: Invalid value: "https://admin:s3cr3t@factory.internal/talos": is not an Image Factory base URL`,
			want:   `spec.imageFactoryURL: Invalid value: "https://REDACTED@factory.internal/talos": is not an Image Factory base URL`,
		},
		"TokenOnly": {
			reason: "A token written as the user is a credential too.",
			in:     "http://ghp_abcdef@10.0.0.1:8080/image",
			want:   "http://REDACTED@10.0.0.1:8080/image",
		},
		"ImageReferenceWithoutScheme": {
			reason: "An image reference carries userinfo without a scheme; it is a credential all the same.",
			in:     `Input image.installerRepository: Invalid value: "robot:t0k3n@registry.example.com/talos/installer": is too long`,
			want:   `Input image.installerRepository: Invalid value: "REDACTED@registry.example.com/talos/installer": is too long`,
		},
		"ImageReferenceWithPortAtStart": {
			reason: "At the start of the text, with a port.",
			in:     "u:p@registry.example.com:5000/talos",
			want:   "REDACTED@registry.example.com:5000/talos",
		},
		"DigestIsNoUserinfo": {
			reason: "A digest's @ has no user:password before it.",
			in:     "ghcr.io/siderolabs/installer@sha256:0123abcd and installer@sha256:0123abcd/x",
			want:   "ghcr.io/siderolabs/installer@sha256:0123abcd and installer@sha256:0123abcd/x",
		},
		"AtInPasswordAndSeveralURLs": {
			reason: "An unescaped @ in the password is masked up to the last @ of the authority, and every URL in the text is masked.",
			in:     "a https://u:p@ss@h1/x and s3://key:secret@bucket and mailto:someone@example.com",
			want:   "a https://REDACTED@h1/x and s3://REDACTED@bucket and mailto:someone@example.com",
		},
		"AtInPathIsNoUserinfo": {
			reason: "An @ after the authority (a path or query) is not userinfo.",
			in:     "https://factory.internal/image/a@b?x=@y",
			want:   "https://factory.internal/image/a@b?x=@y",
		},
		"CDIImporterError": {
			reason: "CDI's importer quotes the endpoint it could not parse.",
			in:     `Unable to connect to http data source: unable to parse endpoint "https://user:pw@factory/x": bad`,
			want:   `Unable to connect to http data source: unable to parse endpoint "https://REDACTED@factory/x": bad`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := Text(tc.in); got != tc.want {
				t.Errorf("%s\nText(%q)\n got %q\nwant %q", tc.reason, tc.in, got, tc.want)
			}
		})
	}
}
