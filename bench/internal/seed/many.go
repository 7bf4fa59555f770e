package seed

import (
	"context"
	"errors"
	"sync"
	"time"
)

// Many runs create(i) for i in [0, n), eight at a time, and logs its
// progress every ten seconds.
func Many(ctx context.Context, n int, logf func(string, ...any), create func(i int) error) error {
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
		next = make(chan int)
	)
	for range 8 {
		wg.Go(func() {
			for i := range next {
				if err := create(i); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}
		})
	}
	last := time.Now()
	for i := 0; i < n && ctx.Err() == nil; i++ {
		if time.Since(last) > 10*time.Second {
			logf("created %d of %d", i, n)
			last = time.Now()
		}
		next <- i
	}
	close(next)
	wg.Wait()
	return errors.Join(append(errs, ctx.Err())...)
}
