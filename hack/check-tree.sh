#!/usr/bin/env bash
# Fails when git tracks what a clone should not carry: a compiled binary
# (ELF, Mach-O, PE, WebAssembly, an ar archive such as a Go .a) anywhere, or
# any file over 1 MiB outside the paths listed in ALLOWED_LARGE below. Build
# outputs belong in bin/ and _output/, which .gitignore keeps out; a 50 MB
# loadgen binary once sat at the root (f10f2ee, removed in 7e70a71).
# One perl process reads every file's size and first bytes (perl-base is
# part of every Debian system).
set -euo pipefail
cd "$(dirname "$0")/.."
# Regular expressions on the repository path of files that may pass the limit
# because a test needs them whole. None today.
ALLOWED_LARGE=''
git ls-files -z | ALLOWED_LARGE="$ALLOWED_LARGE" perl -0 -ne '
  BEGIN { $limit = 1024 * 1024; $allowed = $ENV{ALLOWED_LARGE}; $bad = 0; $n = 0 }
  chomp;
  my $f = $_;
  next unless -f $f;    # a deletion not yet committed
  $n++;
  open(my $fh, "<:raw", $f) or die "$f: $!\n";
  read($fh, my $head, 8);
  close $fh;
  my $kind =
      $head =~ /\A\x7fELF/                                        ? "an ELF binary"
    : $head =~ /\A(\xfe\xed\xfa[\xce\xcf]|[\xce\xcf]\xfa\xed\xfe|\xca\xfe\xba\xbe)/ ? "a Mach-O binary"
    : $head =~ /\AMZ/                                             ? "a PE (Windows) binary"
    : $head =~ /\A\x00asm/                                        ? "a WebAssembly module"
    : $head eq "!<arch>\n"                                        ? "an ar archive (a compiled Go package or C library)"
    :                                                               "";
  if ($kind) {
    print STDERR "$f: git tracks $kind; build outputs go to bin/ or _output/ (ignored): git rm --cached $f\n";
    $bad = 1;
  }
  my $size = -s $f;
  if ($size > $limit && !($allowed ne "" && $f =~ /$allowed/)) {
    print STDERR "$f: $size bytes, over the 1 MiB limit for tracked files; shrink it, generate it in the test, or add the test data that needs it to ALLOWED_LARGE in hack/check-tree.sh\n";
    $bad = 1;
  }
  END {
    exit 1 if $bad;
    print "tree: $n files, no compiled binary and none over 1 MiB\n";
  }
'
