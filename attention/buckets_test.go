package attention

import "testing"

func TestBucket(t *testing.T) {
	cases := []struct {
		name string
		n    int
		bi   bool
		want int
	}{
		// Bidirectional, 32 buckets: 16 per side, 8 exact, log-spaced to 128.
		{"bi same position", 0, true, 0},
		{"bi past exact", 7, true, 7},
		{"bi past first log", 8, true, 8},
		{"bi past 15", 15, true, 9},  // 8 + floor(log(15/8)/log(16)*8) = 8 + 1
		{"bi past 16", 16, true, 10}, // exactly 8 + 2
		{"bi past 31", 31, true, 11},
		{"bi past 32", 32, true, 12},
		{"bi past 127", 127, true, 15},
		{"bi past 128 clipped", 128, true, 15},
		{"bi past far", 1000, true, 15},
		{"bi future 1", -1, true, 17},
		{"bi future 7", -7, true, 23},
		{"bi future 16", -16, true, 26},
		{"bi future far", -500, true, 31},
		{"bi future farther", -1000, true, 31},
		// Causal, 32 buckets: 16 exact, log-spaced to 128.
		{"causal same", 0, false, 0},
		{"causal past 15", 15, false, 15},
		{"causal past 16", 16, false, 16},
		{"causal past 20", 20, false, 17},
		{"causal past 32", 32, false, 21}, // 16 + floor(log(2)/log(8)*16) = 16 + 5
		{"causal past 64", 64, false, 26}, // 16 + floor(2/3*16) = 16 + 10
		{"causal past 127", 127, false, 31},
		{"causal past 128 clipped", 128, false, 31},
		{"causal past far", 500, false, 31},
		{"causal future", -3, false, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Bucket(c.n, c.bi, 32, 128); got != c.want {
				t.Errorf("Bucket(%d, %v) = %d, want %d", c.n, c.bi, got, c.want)
			}
		})
	}
}

// TestBucketBoundaries: distances that land exactly on a log-spaced
// boundary, where float64 logarithms fall just below the integer (with 32
// buckets and 128 they happen to be exact, so TestBucket cannot tell).
func TestBucketBoundaries(t *testing.T) {
	for _, c := range []struct {
		name                 string
		n                    int
		bi                   bool
		buckets, maxDistance int
		want                 int
	}{
		{"bi 18 to 128, past 16", 16, true, 18, 128, 6},        // 4 + log(4)/log(32)*5 = 4 + 2
		{"bi 18 to 128, future 16", -16, true, 18, 128, 9 + 6}, // the other half
		{"causal 10 to 160, past 10", 10, false, 10, 160, 6},   // 5 + log(2)/log(32)*5 = 5 + 1
		{"causal 10 to 160, past 20", 20, false, 10, 160, 7},   // 5 + 2
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := Bucket(c.n, c.bi, c.buckets, c.maxDistance); got != c.want {
				t.Errorf("Bucket(%d, %v, %d, %d) = %d, want %d", c.n, c.bi, c.buckets, c.maxDistance, got, c.want)
			}
		})
	}
}

func TestBucketsMonotone(t *testing.T) {
	for _, bi := range []bool{true, false} {
		prev := -1
		for n := 0; n < 300; n++ {
			b := Bucket(n, bi, 32, 128)
			if b < prev || b > prev+1 && n > 0 {
				t.Fatalf("bidirectional=%v: bucket jumps from %d to %d at distance %d", bi, prev, b, n)
			}
			prev = b
		}
	}
}

func TestBucketsMatrix(t *testing.T) {
	got := Buckets(2, 3, true, 32, 128)
	want := []int{0, 17, 18, 1, 0, 17}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("Buckets = %v, want %v", got, want)
		}
	}
	if err := checkBuckets(32, 128, true); err != nil {
		t.Error(err)
	}
	if err := checkBuckets(3, 128, true); err == nil {
		t.Error("odd bidirectional bucket count accepted")
	}
	if err := checkBuckets(32, 8, true); err == nil {
		t.Error("max distance inside exact range accepted")
	}
}

// TestBucketT5Table pins Bucket at T5's setting (32 buckets, maximum
// distance 128) to the buckets of Hugging Face's T5
// (_relative_position_bucket, float32 logarithms), so that a pretrained
// T5's relative-position table is read as it was trained. Query minus key
// distances n, keys before the query; after is the same distance with the
// key after the query.
func TestBucketT5Table(t *testing.T) {
	ns := []int{0, 1, 2, 3, 7, 8, 9, 11, 12, 15, 16, 17, 22, 23, 31, 32, 33, 45, 46, 63, 64, 65, 90, 91, 127, 128, 129, 500}
	cases := []struct {
		name          string
		bidirectional bool
		before, after []int
	}{
		{"encoder", true,
			[]int{0, 1, 2, 3, 7, 8, 8, 8, 9, 9, 10, 10, 10, 11, 11, 12, 12, 12, 13, 13, 14, 14, 14, 15, 15, 15, 15, 15},
			[]int{0, 17, 18, 19, 23, 24, 24, 24, 25, 25, 26, 26, 26, 27, 27, 28, 28, 28, 29, 29, 30, 30, 30, 31, 31, 31, 31, 31}},
		{"decoder", false,
			[]int{0, 1, 2, 3, 7, 8, 9, 11, 12, 15, 16, 16, 18, 18, 21, 21, 21, 23, 24, 26, 26, 26, 29, 29, 31, 31, 31, 31},
			make([]int, 28)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for k, n := range ns {
				if got := Bucket(n, tc.bidirectional, 32, 128); got != tc.before[k] {
					t.Errorf("distance %d, key before: bucket %d, T5's %d", n, got, tc.before[k])
				}
				if got := Bucket(-n, tc.bidirectional, 32, 128); got != tc.after[k] {
					t.Errorf("distance %d, key after: bucket %d, T5's %d", n, got, tc.after[k])
				}
			}
		})
	}
}
