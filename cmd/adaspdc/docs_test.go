package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestREADMEFiguresFromResults holds the README to its rule on figures: a
// paragraph that quotes a measured ratio (two decimals, such as 0.25×) names the section
// of bench/RESULTS.md that holds it, in quotes, and every number of such a
// ratio occurs in that file; the example's accuracy is the one the
// embedding test asserts.
func TestREADMEFiguresFromResults(t *testing.T) {
	read := func(parts ...string) string {
		b, err := os.ReadFile(filepath.Join(append([]string{"..", ".."}, parts...)...))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	readme, results := read("README.md"), read("bench", "RESULTS.md")
	var headings []string
	for _, line := range strings.Split(results, "\n") {
		if strings.HasPrefix(line, "#") {
			headings = append(headings, strings.TrimSpace(strings.TrimLeft(line, "#")))
		}
	}
	ratio := regexp.MustCompile(`(\d+\.\d\d+)(?:–(\d+\.\d\d+))?×`)
	quoted := regexp.MustCompile(`\("([^"]+)"\)`)
	inCode := false
	for _, para := range strings.Split(readme, "\n\n") {
		if strings.Count(para, "```")%2 == 1 {
			inCode = !inCode
		}
		if inCode || strings.HasPrefix(strings.TrimSpace(para), "```") {
			continue
		}
		figs := ratio.FindAllStringSubmatch(para, -1)
		if figs == nil {
			continue
		}
		named := false
		for _, q := range quoted.FindAllStringSubmatch(para, -1) {
			for _, h := range headings {
				if strings.HasPrefix(h, q[1]) {
					named = true
				}
			}
		}
		if !named {
			t.Errorf("README paragraph quotes %s but names no section of bench/RESULTS.md: %.80q…", figs[0][0], para)
		}
		for _, f := range figs {
			for _, num := range f[1:] {
				if num != "" && !strings.Contains(results, num) {
					t.Errorf("README quotes %s, but bench/RESULTS.md has no %s", f[0], num)
				}
			}
		}
	}
	acc := regexp.MustCompile(`a9a\.t: (\d+\.\d+)%`).FindStringSubmatch(readme)
	if acc == nil || !strings.Contains(read("engine", "embed_test.go"), "want "+acc[1]+"%%") {
		t.Errorf("README's a9a.t accuracy %v is not the one engine/embed_test.go asserts", acc)
	}
}

// TestNoEvidenceInHistory: a comment's evidence is a command that runs on
// the current tree, not a file that exists only in git's history.
func TestNoEvidenceInHistory(t *testing.T) {
	root := filepath.Join("..", "..")
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "results") {
			return filepath.SkipDir
		}
		if d.IsDir() || !(strings.HasSuffix(path, ".go") || strings.HasSuffix(path, ".md")) || strings.HasSuffix(path, "docs_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if regexp.MustCompile("git show [0-9a-f]{7,}:").Match(b) {
			t.Errorf("%s cites a file of git's history as evidence", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
