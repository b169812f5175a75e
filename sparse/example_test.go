package sparse_test

import (
	"fmt"
	"os"
	"strings"

	"github.com/adaspdc/adaspdc/sparse"
)

func ExampleReadLIBSVM() {
	const text = `# label index:value ...
+1 1:0.5 3:2
-1 2:1.5  # a trailing comment
`
	d, err := sparse.ReadLIBSVM(strings.NewReader(text), "example", sparse.ReadOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d×%d, %d nonzeros, labels %v\n", d.X.Rows, d.X.Cols, d.X.NNZ(), d.Y)
	val, idx := d.X.Row(0)
	fmt.Println("row 0: columns", idx, "values", val)
	// Output:
	// 2×3, 3 nonzeros, labels [1 -1]
	// row 0: columns [0 2] values [0.5 2]
}

func ExampleReadLIBSVM_error() {
	_, err := sparse.ReadLIBSVM(strings.NewReader("+1 1:0.5\n-1 2:1 0:3\n"), "example", sparse.ReadOptions{})
	fmt.Println(err)
	// Output:
	// example:2:8: index 0: feature indices are 1-based
}

func ExampleBinaryLabels() {
	signs, labels, err := sparse.BinaryLabels([]float64{2, 4, 4, 2})
	fmt.Println(signs, labels, err)
	fmt.Println(labels.Raw(+1), labels.Raw(-1))
	// Output:
	// [-1 1 1 -1] {2 4} <nil>
	// 4 2
}

func ExampleWriteCache() {
	d, err := sparse.ReadLIBSVM(strings.NewReader("1 1:1\n-1 2:2\n"), "tiny", sparse.ReadOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	f, err := os.CreateTemp("", "tiny-*.cache")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.Remove(f.Name())
	if err := sparse.WriteCache(f, d); err != nil {
		fmt.Println(err)
		return
	}
	f.Close()
	// ReadFile tells the cache from text by its magic number.
	back, err := sparse.ReadFile(f.Name(), sparse.ReadOptions{})
	fmt.Println(back.X.Rows, back.X.Cols, back.Y, err)
	// Output:
	// 2 2 [1 -1] <nil>
}
