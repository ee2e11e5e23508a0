// Command benchtable reads `go test -bench -benchmem` output on stdin and
// prints it as a Markdown table (the median of repeated runs), then, per
// mode of BenchmarkRunFunction, the scaling ratio: time per observed object
// at the largest size over that at the smallest (linear or better is 1.0 or
// less), and the marginal ratio: time per added object between the two
// largest sizes over that between the two smallest, which a fixed per-call
// overhead does not flatter.
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

type row struct {
	name    string
	metrics map[string][]float64
}

func main() {
	rows, order := parse(os.Stdin)
	if len(order) == 0 {
		fmt.Fprintln(os.Stderr, "benchtable: no benchmark lines on stdin")
		os.Exit(1)
	}
	fmt.Println("| benchmark | ns/op | B/op | allocs/op | objects | request bytes | response bytes | calls |")
	fmt.Println("|---|---:|---:|---:|---:|---:|---:|---:|")
	for _, n := range order {
		r := rows[n]
		fmt.Printf("| %s | %s | %s | %s | %s | %s | %s | %s |\n", n,
			num(r, "ns/op"), num(r, "B/op"), num(r, "allocs/op"), num(r, "objects"), num(r, "req-bytes"), num(r, "rsp-bytes"), num(r, "calls"))
	}
	fmt.Println()
	scaling(rows, order)
}

func parse(in io.Reader) (map[string]*row, []string) {
	rows := map[string]*row{}
	var order []string
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		name := f[0]
		if i := strings.LastIndex(name, "-"); i > 0 {
			if _, err := strconv.Atoi(name[i+1:]); err == nil {
				name = name[:i] // drop the GOMAXPROCS suffix
			}
		}
		r, ok := rows[name]
		if !ok {
			r = &row{name: name, metrics: map[string][]float64{}}
			rows[name] = r
			order = append(order, name)
		}
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				continue
			}
			r.metrics[f[i+1]] = append(r.metrics[f[i+1]], v)
		}
	}
	return rows, order
}

func median(r *row, unit string) (float64, bool) {
	vs := slices.Clone(r.metrics[unit])
	if len(vs) == 0 {
		return 0, false
	}
	slices.Sort(vs)
	return vs[len(vs)/2], true
}

func num(r *row, unit string) string {
	v, ok := median(r, unit)
	if !ok {
		return ""
	}
	if v >= 100 || v == float64(int64(v)) {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

type point struct {
	name         string
	ns, objects  float64
	reqB, rspB   float64
	hasSizeBytes bool
}

// digits are the size parameters of a case name.
var digits = regexp.MustCompile(`[0-9]+`)

func scaling(rows map[string]*row, order []string) {
	byMode := map[string][]point{}
	var modes []string
	for _, n := range order {
		parts := strings.Split(n, "/")
		if len(parts) < 3 || parts[0] != "BenchmarkRunFunction" {
			continue
		}
		r := rows[n]
		ns, ok1 := median(r, "ns/op")
		obj, ok2 := median(r, "objects")
		if !ok1 || !ok2 || obj == 0 {
			continue
		}
		p := point{name: parts[2], ns: ns, objects: obj}
		p.reqB, p.hasSizeBytes = median(r, "req-bytes")
		p.rspB, _ = median(r, "rsp-bytes")
		// A mode's cases scale along one or more families (the node pool's
		// minimal, CDI-shaped settled and CDI-shaped rolling workers): the
		// case name with its numbers replaced. Each family is its own row.
		key := parts[1]
		if fam := digits.ReplaceAllString(parts[2], "N"); fam != "" {
			key += " (" + fam + ")"
		}
		if _, seen := byMode[key]; !seen {
			modes = append(modes, key)
		}
		byMode[key] = append(byMode[key], p)
	}
	fmt.Println("| mode | smallest | largest | ns per object (smallest) | ns per object (largest) | scaling ratio | marginal ratio |")
	fmt.Println("|---|---|---|---:|---:|---:|---:|")
	for _, m := range modes {
		ps := byMode[m]
		slices.SortFunc(ps, func(a, b point) int { return int(a.objects - b.objects) })
		if len(ps) < 2 {
			continue
		}
		lo, hi := ps[0], ps[len(ps)-1]
		perLo, perHi := lo.ns/lo.objects, hi.ns/hi.objects
		marginal := "n/a"
		if len(ps) >= 3 {
			a, b := ps[0], ps[1]
			c, d := ps[len(ps)-2], ps[len(ps)-1]
			if b.objects > a.objects && d.objects > c.objects {
				s1 := (b.ns - a.ns) / (b.objects - a.objects)
				s2 := (d.ns - c.ns) / (d.objects - c.objects)
				if s1 > 0 {
					marginal = fmt.Sprintf("%.2f", s2/s1)
				}
			}
		}
		fmt.Printf("| %s | %s | %s | %.0f | %.0f | %.2f | %s |\n", m, lo.name, hi.name, perLo, perHi, perHi/perLo, marginal)
	}
	fmt.Println()
	fmt.Println("Message size at the largest size of each mode, and the size at which one composite's request or response reaches gRPC's 4 MiB default (linear extrapolation in the size parameter):")
	fmt.Println()
	fmt.Println("| mode | largest | objects | request bytes | response bytes | request bytes per object | objects at a 4 MiB request | objects at a 4 MiB response |")
	fmt.Println("|---|---|---:|---:|---:|---:|---:|---:|")
	for _, m := range modes {
		ps := byMode[m]
		if len(ps) < 2 {
			continue
		}
		hi := ps[len(ps)-1]
		if !hi.hasSizeBytes {
			continue
		}
		lo := ps[0]
		if hi.objects == lo.objects {
			// The request does not grow with the size parameter at all.
			fmt.Printf("| %s | %s | %.0f | %.0f | %.0f | 0 | never (constant) | never (constant) |\n", m, hi.name, hi.objects, hi.reqB, hi.rspB)
			continue
		}
		per := (hi.reqB - lo.reqB) / (hi.objects - lo.objects)
		fmt.Printf("| %s | %s | %.0f | %.0f | %.0f | %.0f | %s | %s |\n", m, hi.name, hi.objects, hi.reqB, hi.rspB, per,
			at4MiB(lo.objects, lo.reqB, per), at4MiB(lo.objects, lo.rspB, (hi.rspB-lo.rspB)/(hi.objects-lo.objects)))
	}
}

// at4MiB extrapolates linearly from (objects, bytes) at slope per to the
// number of objects at which the message reaches 4 MiB.
func at4MiB(objects, bytes, per float64) string {
	if per <= 0 {
		return "never (constant)"
	}
	return fmt.Sprintf("%.0f", objects+(4<<20-bytes)/per)
}
