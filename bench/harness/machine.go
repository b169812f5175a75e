// Package harness runs the benchmark studies behind `adaspdc-bench`:
// scaling sweeps over m and threads (Scale), paper reproductions (Paper)
// and whole-process comparisons with other tools (Peers). Every file it
// writes names the machine it ran on (Machine), so that figures from a
// 2-core machine are never mistaken for figures from a larger one.
package harness

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/adaspdc/adaspdc/kernels"
	"github.com/klauspost/cpuid/v2"
)

// Machine describes the computer and the build a benchmark ran on.
type Machine struct {
	CPU   string // the CPU's brand name
	Cores int    // logical CPUs the Go runtime sees (runtime.NumCPU)
	// GOMAXPROCS is how many of them Go code may run on at once: fewer
	// than Cores under a container's CPU limit or an explicit setting, and
	// then the bound on any speed-up.
	GOMAXPROCS int
	// PhysicalCores is the physical core count CPUID reports where it is
	// plausible (plausibleCores), 0 when unknown; CPUIDCores is what CPUID
	// reported, kept so that the summary can show an implausible value
	// for what it is.
	PhysicalCores int
	CPUIDCores    int
	Flags         []string // every CPU feature cpuid detects
	Kernels       string   // the SIMD kernel implementation in use (kernels.Impl)
	GoVersion     string
	OSArch        string
	Commit        string // the source commit (commit), "+dirty" when the tree had changes; "unknown" without build info or git
}

// plausibleCores returns the physical cores CPUID reports, or 0 (unknown)
// where the count cannot be this machine's: a virtual machine may pass the
// host's topology through (254 physical cores on a guest of 2 vCPUs), and
// a guest cannot have more physical cores than logical ones.
func plausibleCores(physical, logical int) int {
	if physical < 1 || physical > logical {
		return 0
	}
	return physical
}

// coresText describes the CPUs for a summary: the logical ones and
// GOMAXPROCS, which the Go runtime knows, and the physical cores CPUID
// reports only where the count is plausible, since a virtual machine may
// report its host's.
func coresText(logical, gomaxprocs, cpuidCores int) string {
	phys := fmt.Sprintf("physical: unknown (CPUID reports %d)", cpuidCores)
	if p := plausibleCores(cpuidCores, logical); p > 0 {
		phys = fmt.Sprintf("physical: %d (CPUID)", p)
	}
	return fmt.Sprintf("%d logical (runtime.NumCPU), GOMAXPROCS %d; %s", logical, gomaxprocs, phys)
}

// ThisMachine describes the running process's machine and build.
func ThisMachine() Machine {
	return Machine{
		CPU:           strings.TrimSpace(cpuid.CPU.BrandName),
		Cores:         runtime.NumCPU(),
		GOMAXPROCS:    runtime.GOMAXPROCS(0),
		PhysicalCores: plausibleCores(cpuid.CPU.PhysicalCores, runtime.NumCPU()),
		CPUIDCores:    cpuid.CPU.PhysicalCores,
		Flags:         cpuid.CPU.FeatureSet(),
		Kernels:       kernels.Impl(),
		GoVersion:     runtime.Version(),
		OSArch:        runtime.GOOS + "/" + runtime.GOARCH,
		Commit:        commit(),
	}
}

// SourceCommit is the commit every file the harness writes names (Machine's
// Commit), for a -version line to show beside the build's own stamp.
func SourceCommit() string { return commit() }

// commit names the source the running binary was built from: the
// version-control stamp the Go toolchain puts in a binary built in a work
// tree, or, for one without a stamp (go run, go test), the commit of the
// working directory's repository, asked of git. The stamp comes first
// because the working directory may hold other sources than the binary,
// a newer checkout say.
func commit() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		if c := stampedCommit(info.Settings); c != "" {
			return c
		}
	}
	if out, err := exec.Command("git", "rev-parse", "--short=12", "HEAD").Output(); err == nil {
		c := strings.TrimSpace(string(out))
		if st, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(strings.TrimSpace(string(st))) > 0 {
			c += "+dirty"
		}
		return c
	}
	return "unknown"
}

// stampedCommit is the commit of a build's version-control stamp
// (vcs.revision), shortened to 12 digits, with "+dirty" where the work tree
// had uncommitted changes (vcs.modified), the mark adaspdc-bench -version
// uses; "" without a stamp.
func stampedCommit(settings []debug.BuildSetting) string {
	var rev string
	var dirty bool
	for _, s := range settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return ""
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if dirty {
		rev += "+dirty"
	}
	return rev
}

// simdFlags are the CPU features that decide which kernels run and how fast.
var simdFlags = []string{"SSE4_2", "AVX", "AVX2", "FMA3", "AVX512F", "AVX512VL", "AVX512DQ", "ASIMD", "SVE"}

// SIMDFlags returns the detected features among those that matter to the
// kernels, in a fixed order.
func (m Machine) SIMDFlags() []string {
	var out []string
	for _, f := range simdFlags {
		if slices.Contains(m.Flags, f) {
			out = append(out, f)
		}
	}
	return out
}

// Short is a one-line description for plot titles and progress lines.
// It names GOMAXPROCS only where it is below the logical CPUs, which then
// bound the threads that run at once.
func (m Machine) Short() string {
	cpus := fmt.Sprintf("%d cores", m.Cores)
	if m.GOMAXPROCS > 0 && m.GOMAXPROCS < m.Cores {
		cpus += fmt.Sprintf(" (GOMAXPROCS %d)", m.GOMAXPROCS)
	}
	return fmt.Sprintf("%s, %s, kernels %s, %s, commit %s", m.cpuName(), cpus, m.Kernels, m.GoVersion, m.Commit)
}

func (m Machine) cpuName() string {
	if m.CPU == "" {
		return "unknown CPU"
	}
	return m.CPU
}

// Markdown is the machine block every summary starts with.
func (m Machine) Markdown() string {
	var b strings.Builder
	host, _ := os.Hostname()
	fmt.Fprintf(&b, "- **CPU:** %s (%s)\n", m.cpuName(), m.OSArch)
	fmt.Fprintf(&b, "- **Cores:** %s\n", coresText(m.Cores, m.GOMAXPROCS, m.CPUIDCores))
	fmt.Fprintf(&b, "- **Kernels:** %s; SIMD flags: %s\n", m.Kernels, strings.Join(m.SIMDFlags(), " "))
	fmt.Fprintf(&b, "- **Go:** %s; **commit:** %s; **host:** %s\n", m.GoVersion, m.Commit, host)
	fmt.Fprintf(&b, "- **All CPU flags:** %s\n", strings.Join(m.Flags, " "))
	return b.String()
}

// Name is a short folder name for the machine's results, such as
// "amd-epyc-2c": the CPU's brand in lower case and the core count.
func (m Machine) Name() string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(m.cpuName()) {
		switch {
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
			dash = false
		case !dash && b.Len() > 0:
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.TrimSuffix(b.String(), "-") + fmt.Sprintf("-%dc", m.Cores)
}

// csvHeader and csvFields put the machine on every row of a CSV file, so
// that a row copied elsewhere still says where it was measured.
var machineCSVHeader = []string{"cpu", "cores", "simd_flags", "kernels", "go", "commit"}

func (m Machine) csvFields() []string {
	return []string{m.cpuName(), fmt.Sprint(m.Cores), strings.Join(m.SIMDFlags(), " "), m.Kernels, m.GoVersion, m.Commit}
}

// LoadAverage returns the 1-, 5- and 15-minute load averages from
// /proc/loadavg, or "unknown": a load above the core count means other
// processes shared the cores during the measurement.
func LoadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}
