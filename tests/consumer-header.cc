/*
 * The installed header in a C++ program: tests/consumers.sh compiles this
 * with g++ -std=c++11 and -std=c++17, -pedantic -Wall -Wextra -Werror,
 * links it against the installed library (which shows the declarations
 * have C linkage) and runs it.
 *
 * SPDX-License-Identifier: MIT
 */
#include <shiftpool.h>

#include <cstdio>
#include <new>

namespace
{

struct request {
	int id;
	char path[56];
};

// A pool handed to C++ code as a typed arena.
class request_pool
{
      public:
	request_pool() : pool_(pool_init(sizeof(request), 8, POOL_LOCKED))
	{
	}
	~request_pool()
	{
		pool_destroy(pool_);
	}
	request_pool(const request_pool &) = delete;
	request_pool &operator=(const request_pool &) = delete;

	bool ready() const
	{
		return pool_ != nullptr;
	}

	request *make(int id)
	{
		void *p = pool_malloc(pool_, sizeof(request));
		return p ? new (p) request{id, {}} : nullptr;
	}

	void drop(request *r)
	{
		r->~request();
		pool_free(pool_, r);
	}

	size_t in_use() const
	{
		pool_stats_t st;
		return pool_stats(pool_, &st) == 0 ? st.in_use : 0;
	}

      private:
	pool_t *pool_;
};

void on_misuse(const pool_t *, const char *function, const void *,
               pool_error error, void *)
{
	std::fprintf(stderr, "%s: %s\n", function, pool_error_string(error));
}

} // namespace

int main()
{
	pool_set_error_handler(on_misuse, nullptr);
	request_pool requests;
	if (!requests.ready())
		return 1;
	request *r = requests.make(7);
	bool ok = r != nullptr && r->id == 7 && requests.in_use() == 1;
	if (r != nullptr)
		requests.drop(r);
	ok = ok && requests.in_use() == 0;
	std::printf("%s %s\n", ok ? "ok" : "wrong", shiftpool_version());
	return ok ? 0 : 1;
}
