package sparse

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOverflowingRowRefused: a row whose squared norm overflows float64 is
// refused at load time with its line, since every solver squares the rows;
// values whose squares still sum finitely are data like any other.
func TestOverflowingRowRefused(t *testing.T) {
	for _, input := range []string{"-1 2:1\n1 1:1e155 2:1\n", "-1 2:1\n1 1:1e308\n"} {
		_, err := ReadLIBSVM(strings.NewReader(input), "big", ReadOptions{})
		var pe *ParseError
		if !errors.As(err, &pe) || pe.Line != 2 || !strings.Contains(pe.Msg, "overflows") {
			t.Errorf("%q: error %v, want line 2 and the overflow named", input, err)
		}
	}
	if _, err := ReadLIBSVM(strings.NewReader("1 1:1e150 2:1e150\n-1 2:1\n"), "fine", ReadOptions{}); err != nil {
		t.Errorf("values of 1e150 refused: %v", err)
	}
}

// TestCompressedInputNamed: a compressed file is named as such, with the
// tool that decompresses it, instead of failing on its first "label".
func TestCompressedInputNamed(t *testing.T) {
	for _, c := range []struct{ head, format string }{
		{"\x1f\x8b\x08\x00\x00\x00", "gzip"},
		{"BZh91AY&SY", "bzip2"},
		{"\xfd7zXZ\x00\x00", "xz"},
		{"\x28\xb5\x2f\xfd\x00", "zstd"},
		{"PK\x03\x04\x14\x00", "zip"},
	} {
		path := filepath.Join(t.TempDir(), "data."+c.format)
		os.WriteFile(path, []byte(c.head+"more bytes\n"), 0o644)
		_, err := ReadFile(path, ReadOptions{})
		if err == nil || !strings.Contains(err.Error(), "is compressed ("+c.format+")") {
			t.Errorf("%s: error %v", c.format, err)
		}
	}
}

// TestLongLineRefused: a line past MaxLineBytes is refused with its line
// number, by the sized reader (which then stops reading it) and by the
// streaming one alike, whether the line fits a chunk or spans many.
func TestLongLineRefused(t *testing.T) {
	long := "1 " + strings.Repeat("1:1", 1) + strings.Repeat(" ", 50_000) + "\n"
	input := "+1 1:0.5\n-1 2:1\n" + long + "+1 1:1\n"
	for _, opt := range []ReadOptions{
		{MaxLineBytes: 1000},
		{MaxLineBytes: 1000, Threads: 3, chunkSize: 64},
		{MaxLineBytes: 1000, chunkSize: 100_000},
	} {
		for name, r := range map[string]func() *bytes.Reader{"sized": func() *bytes.Reader { return bytes.NewReader([]byte(input)) }} {
			_, err := ReadLIBSVM(r(), "long", opt)
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Line != 3 || !strings.Contains(pe.Msg, "longer than 1000 bytes") {
				t.Errorf("%s, %+v: error %v, want line 3 named", name, opt, err)
			}
		}
		_, err := ReadLIBSVM(streamOnly{bytes.NewReader([]byte(input))}, "long", opt)
		var pe *ParseError
		if !errors.As(err, &pe) || pe.Line != 3 || !strings.Contains(pe.Msg, "longer than 1000 bytes") {
			t.Errorf("stream, %+v: error %v, want line 3 named", opt, err)
		}
	}
	if _, err := ReadLIBSVM(strings.NewReader(input), "long", ReadOptions{}); err != nil {
		t.Errorf("a 50 kB line under the default bound: %v", err)
	}
	if _, err := ReadLIBSVM(strings.NewReader(input), "long", ReadOptions{MaxLineBytes: -1}); err == nil {
		t.Error("a negative MaxLineBytes was accepted")
	}
}
