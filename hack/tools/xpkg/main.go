// Command xpkg builds the function's runtime image and checks built Crossplane
// packages, without Docker. It lives in its own module so that the function's
// go.mod does not carry go-containerregistry.
//
//	xpkg runtime-image -binary _output/bin/function -arch amd64 -o _output/runtime.tar
//	xpkg check-function -package _output/function-worker-image.xpkg -input package/input
//	xpkg check-configuration -package _output/configuration-worker-image.xpkg -source package/configuration
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// FunctionPackage is the OCI repository the Configurations depend on.
const FunctionPackage = "ghcr.io/cozystack/function-worker-image"

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	switch os.Args[1] {
	case "runtime-image":
		err = runtimeImage(os.Args[2:])
	case "check-function":
		err = checkFunction(os.Args[2:])
	case "check-configuration":
		err = checkConfiguration(os.Args[2:])
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "xpkg:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: xpkg runtime-image|check-function|check-configuration [flags]")
	os.Exit(2)
}

func runtimeImage(args []string) error {
	fs := flag.NewFlagSet("runtime-image", flag.ExitOnError)
	binary := fs.String("binary", "", "the static function binary")
	arch := fs.String("arch", "amd64", "the binary's GOARCH")
	out := fs.String("o", "", "the image tarball to write")
	tag := fs.String("tag", "function-worker-image:runtime", "the tag recorded in the tarball")
	_ = fs.Parse(args)
	if *binary == "" || *out == "" {
		return fmt.Errorf("runtime-image needs -binary and -o")
	}
	data, err := os.ReadFile(*binary)
	if err != nil {
		return err
	}
	img, err := RuntimeImage(data, *arch)
	if err != nil {
		return err
	}
	ref, err := name.NewTag(*tag)
	if err != nil {
		return err
	}
	return tarball.WriteToFile(*out, ref, img)
}

func report(what string, p Problems) error {
	if len(p) == 0 {
		fmt.Printf("%s: ok\n", what)
		return nil
	}
	return fmt.Errorf("%s:\n  %s", what, strings.Join(p, "\n  "))
}

func checkFunction(args []string) error {
	fs := flag.NewFlagSet("check-function", flag.ExitOnError)
	pkg := fs.String("package", "", "the Function .xpkg")
	input := fs.String("input", "package/input", "the directory of the Input CRD")
	n := fs.String("name", "function-worker-image", "the Function's metadata name")
	_ = fs.Parse(args)
	p, err := ReadPackage(*pkg)
	if err != nil {
		return err
	}
	return report(*pkg, CheckFunction(p, *n, *input))
}

func checkConfiguration(args []string) error {
	fs := flag.NewFlagSet("check-configuration", flag.ExitOnError)
	pkg := fs.String("package", "", "the Configuration .xpkg")
	source := fs.String("source", "package/configuration", "the directory the Configuration was built from")
	n := fs.String("name", "configuration-worker-image", "the Configuration's metadata name")
	fn := fs.String("function-package", FunctionPackage, "the Function package the Configuration must depend on")
	_ = fs.Parse(args)
	p, err := ReadPackage(*pkg)
	if err != nil {
		return err
	}
	return report(*pkg, CheckConfiguration(p, *n, *source, *fn))
}
