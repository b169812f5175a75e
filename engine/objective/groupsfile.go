package objective

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
)

// The groups file gives GroupLasso its groups. It is plain text, one
// feature per line:
//
//	# comments run from '#' to the end of the line
//	<feature> <group>
//
// where feature is the feature's 1-based index, as in LIBSVM data, and
// group is an integer from 0 to 2147483647 naming its group, or −1 for
// none (an unpenalised feature). The two fields are separated by spaces or
// tabs; blank lines are skipped. Features the file does not list are in no
// group, like −1; a feature listed twice, an index beyond the data's
// features, or anything else on a line is an error that names the file,
// the line and the cause.

// maxGroupsLine bounds the length of one line of a groups file.
const maxGroupsLine = 1 << 16

// ReadGroupsFile reads the groups file at path for data with d features;
// see ReadGroups.
func ReadGroupsFile(path string, d int) ([]int32, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("engine: groups file: %w", err)
	}
	defer f.Close()
	return ReadGroups(f, path, d)
}

// ReadGroups reads a groups file (the format is described above) for data
// with d features and returns the group id of each, −1 for none, ready for
// GroupLasso.Groups. name names the source in errors.
func ReadGroups(r io.Reader, name string, d int) ([]int32, error) {
	if d < 1 {
		return nil, fmt.Errorf("engine: groups file %s: the data has %d features", name, d)
	}
	groups := make([]int32, d)
	for j := range groups {
		groups[j] = -1
	}
	listed := make([]int, d) // the line that listed each feature, 0: none
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxGroupsLine)
	line := 0
	for sc.Scan() {
		line++
		text := sc.Bytes()
		if i := bytes.IndexByte(text, '#'); i >= 0 {
			text = text[:i]
		}
		fields := bytes.Fields(text)
		if len(fields) == 0 {
			continue
		}
		bad := func(format string, args ...any) error {
			return fmt.Errorf("engine: groups file %s, line %d: %s", name, line, fmt.Sprintf(format, args...))
		}
		if len(fields) != 2 {
			return nil, bad("want \"feature group\", got %d fields", len(fields))
		}
		feat, err := strconv.ParseInt(string(fields[0]), 10, 64)
		if err != nil || feat < 1 {
			return nil, bad("feature %q is not an index ≥ 1", truncateField(fields[0]))
		}
		if feat > int64(d) {
			return nil, bad("feature %d is beyond the data's %d features", feat, d)
		}
		g, err := strconv.ParseInt(string(fields[1]), 10, 64)
		if err != nil || g < -1 || g > math.MaxInt32 {
			return nil, bad("group %q is not an integer from -1 to %d", truncateField(fields[1]), math.MaxInt32)
		}
		j := feat - 1
		if listed[j] != 0 {
			return nil, bad("feature %d is listed again (first on line %d)", feat, listed[j])
		}
		listed[j] = line
		groups[j] = int32(g)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("engine: groups file %s, line %d: longer than %d bytes", name, line+1, maxGroupsLine)
		}
		return nil, fmt.Errorf("engine: groups file %s, after line %d: %w", name, line, err)
	}
	return groups, nil
}

// truncateField shortens a field for an error message.
func truncateField(b []byte) string {
	if len(b) > 40 {
		return string(b[:40]) + "…"
	}
	return string(b)
}
