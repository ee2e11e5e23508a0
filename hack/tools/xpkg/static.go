package main

import (
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
)

// checkStatic refuses a binary that is not a statically linked ELF
// executable: the base layer has no libc and no dynamic loader.
func checkStatic(binary []byte) error {
	f, err := elf.NewFile(bytes.NewReader(binary))
	if err != nil {
		return fmt.Errorf("the function binary is not an ELF executable (build it with GOOS=linux): %w", err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return errors.New("the function binary is dynamically linked; build it with CGO_ENABLED=0: the runtime image has no libc")
		}
	}
	return nil
}
