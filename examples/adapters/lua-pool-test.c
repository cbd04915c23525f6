/*
 * examples/adapters/lua-pool-test: Lua 5.4 on a pool set, with a real
 * workload.
 *
 * In each mode of the set, lua_pool_newstate() makes a state on a fresh
 * set and runs a script that builds strings (formatted parts joined, a
 * string grown by concatenation), fills, sorts and empties tables (an
 * array of 100,000 numbers, a hash of 50,000 keys), makes a thousand
 * closures and a coroutine, and runs binary-trees to depth 12; each of
 * its results is checked against the value computed here in C.  With its
 * data alive, and after a full collection, the bytes the set holds must
 * agree with what Lua counts (at least as much, at most twice as much
 * plus a minimum block each);
 * after lua_close() the set must have served every allocation, with no
 * fallback, and got all of them back.  Last, a shrink through
 * lua_pool_alloc() must succeed and keep its bytes even when the class it
 * would move to is exhausted and the set has no fallback, since Lua
 * counts on a shrink never failing.  Exits 0, 1 on a failed check.
 *
 * SPDX-License-Identifier: MIT
 */
#include "adapter-test.h"
#include "lua-pool.h"

#include <inttypes.h>
#include <lauxlib.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------ limits */

#define PARTS        20000 /* formatted parts joined */
#define CONCATS      3000  /* numbers appended one by one */
#define ARRAY        100000
#define ARRAY_MODULO 100003
#define KEYS         50000
#define CLOSURES     1000
#define CALLS        10 /* of each closure */
#define YIELDS       10000
#define TREE_DEPTH   12
#define MIN_DEPTH    4

/* 16 B to 4 MiB: the largest blocks Lua asks for here are the array's
 * part of 2^17 slots (2 MiB) and the buffers that build the joined
 * string. */
#define SET_MIN_BLOCK   16
#define SET_MAX_BLOCK   ((size_t)4 << 20)
#define SET_CLASS_BYTES ((size_t)64 << 20)

/* ------------------------------------------------------------ script */

/* Returns its results in the order of struct results. */
static const char script[] =
    "local PARTS, CONCATS, ARRAY, MODULO, KEYS, CLOSURES, CALLS, YIELDS,\n"
    "      DEPTH, MIN_DEPTH = ...\n"
    "local parts = {}\n"
    "for i = 1, PARTS do\n"
    "  parts[#parts + 1] = string.format('%d:%s', i, string.rep('x', i % 50))\n"
    "end\n"
    "local joined = table.concat(parts, ',')\n"
    "local numbers = 0\n"
    "for _ in joined:gmatch('%d+') do numbers = numbers + 1 end\n"
    "local grown = ''\n"
    "for i = 1, CONCATS do grown = grown .. tostring(i) end\n"
    "parts = nil\n"
    "\n"
    "local array = {}\n"
    "for i = 1, ARRAY do array[i] = (i * 7919) % MODULO end\n"
    "table.sort(array)\n"
    "account()\n"
    "local sorted, array_sum = 1, 0\n"
    "for i = 1, #array do\n"
    "  array_sum = array_sum + array[i]\n"
    "  if i > 1 and array[i - 1] > array[i] then sorted = 0 end\n"
    "end\n"
    "array = nil\n"
    "local hash = {}\n"
    "for i = 1, KEYS do hash['k' .. i] = i end\n"
    "for i = 1, KEYS, 2 do hash['k' .. i] = nil end\n"
    "local hash_count, hash_sum = 0, 0\n"
    "for _, v in pairs(hash) do\n"
    "  hash_count = hash_count + 1\n"
    "  hash_sum = hash_sum + v\n"
    "end\n"
    "hash = nil\n"
    "\n"
    "local counters = {}\n"
    "for i = 1, CLOSURES do\n"
    "  local count = 0\n"
    "  counters[i] = function() count = count + i; return count end\n"
    "end\n"
    "local closure_sum = 0\n"
    "for _ = 1, CALLS do\n"
    "  for i = 1, CLOSURES do closure_sum = closure_sum + counters[i]() end\n"
    "end\n"
    "counters = nil\n"
    "local generator = coroutine.wrap(function()\n"
    "  for i = 1, YIELDS do coroutine.yield(i) end\n"
    "end)\n"
    "local yield_sum = 0\n"
    "for _ = 1, YIELDS do yield_sum = yield_sum + generator() end\n"
    "\n"
    "local function bottom_up(depth)\n"
    "  if depth == 0 then return {} end\n"
    "  depth = depth - 1\n"
    "  return {bottom_up(depth), bottom_up(depth)}\n"
    "end\n"
    "local function check(tree)\n"
    "  if tree[1] then return 1 + check(tree[1]) + check(tree[2]) end\n"
    "  return 1\n"
    "end\n"
    "local stretch = check(bottom_up(DEPTH + 1))\n"
    "local long_lived = bottom_up(DEPTH)\n"
    "local trees = 0\n"
    "for depth = MIN_DEPTH, DEPTH, 2 do\n"
    "  for _ = 1, 1 << (DEPTH - depth + MIN_DEPTH) do\n"
    "    trees = trees + check(bottom_up(depth))\n"
    "  end\n"
    "end\n"
    "local long_lived_check = check(long_lived)\n"
    "account()\n"
    "collectgarbage('collect')\n"
    "return #joined, numbers, #grown, sorted, array_sum, hash_count,\n"
    "       hash_sum, closure_sum, yield_sum, stretch, trees,\n"
    "       long_lived_check\n";

enum result {
	JOINED_LENGTH,
	NUMBERS,
	GROWN_LENGTH,
	SORTED,
	ARRAY_SUM,
	HASH_COUNT,
	HASH_SUM,
	CLOSURE_SUM,
	YIELD_SUM,
	STRETCH,
	TREES,
	LONG_LIVED,
	RESULTS
};

static const char *const result_names[RESULTS] = {
    "joined length", "numbers",   "grown length", "sorted",
    "array sum",     "hash keys", "hash sum",     "closure sum",
    "yield sum",     "stretch",   "trees",        "long-lived tree",
};

/* What the script must return, computed in C. */
static void expect_results(int64_t *expected)
{
	memset(expected, 0, RESULTS * sizeof(*expected));
	for (int i = 1; i <= PARTS; i++) {
		char digits[16];
		expected[JOINED_LENGTH] +=
		    snprintf(digits, sizeof(digits), "%d", i) + 1 + i % 50;
	}
	expected[JOINED_LENGTH] += PARTS - 1; /* the commas */
	expected[NUMBERS] = PARTS;
	for (int i = 1; i <= CONCATS; i++) {
		char digits[16];
		expected[GROWN_LENGTH] +=
		    snprintf(digits, sizeof(digits), "%d", i);
	}
	expected[SORTED] = 1;
	for (int64_t i = 1; i <= ARRAY; i++)
		expected[ARRAY_SUM] += i * 7919 % ARRAY_MODULO;
	for (int64_t i = 2; i <= KEYS; i += 2) {
		expected[HASH_COUNT]++;
		expected[HASH_SUM] += i;
	}
	/* The kth call of closure i returns k * i. */
	for (int64_t i = 1; i <= CLOSURES; i++)
		expected[CLOSURE_SUM] += i * CALLS * (CALLS + 1) / 2;
	expected[YIELD_SUM] = (int64_t)YIELDS * (YIELDS + 1) / 2;
	/* A tree of depth d has 2^(d+1) - 1 nodes. */
	expected[STRETCH] = ((int64_t)1 << (TREE_DEPTH + 2)) - 1;
	for (int depth = MIN_DEPTH; depth <= TREE_DEPTH; depth += 2)
		expected[TREES] +=
		    ((int64_t)1 << (TREE_DEPTH - depth + MIN_DEPTH)) *
		    (((int64_t)1 << (depth + 1)) - 1);
	expected[LONG_LIVED] = ((int64_t)1 << (TREE_DEPTH + 1)) - 1;
}

/* ------------------------------------------------------------ checks */

/* The bytes of the set's blocks in use, class by class. */
static size_t set_bytes_in_use(const pool_set_t *set, size_t *blocks)
{
	size_t bytes = 0;
	*blocks = 0;
	for (size_t block = SET_MIN_BLOCK; block <= SET_MAX_BLOCK; block *= 2) {
		pool_stats_t stats;
		if (pool_set_stats(set, block, &stats) == 0) {
			bytes += stats.in_use * block;
			*blocks += stats.in_use;
		}
	}
	return bytes;
}

/*
 * What Lua counts is the sum of the sizes it asked for; each is in the
 * smallest class that fits it, at most twice its size or the smallest
 * block.  The set's bytes in use must lie in between, or the set and Lua
 * disagree about what is allocated.
 */
static void check_accounting(lua_State *state, const pool_set_t *set,
                             const char *what)
{
	size_t blocks;
	size_t lua_bytes = (size_t)lua_gc(state, LUA_GCCOUNT, 0) * 1024 +
	                   (size_t)lua_gc(state, LUA_GCCOUNTB, 0);
	size_t set_bytes = set_bytes_in_use(set, &blocks);

	test_check(lua_bytes <= set_bytes &&
	               set_bytes <= 2 * lua_bytes + SET_MIN_BLOCK * blocks,
	           "%s: Lua counts %zu bytes, the set holds %zu in %zu blocks",
	           what, lua_bytes, set_bytes, blocks);
	printf("%s: Lua counts %zu bytes, the set holds %zu in %zu blocks\n",
	       what, lua_bytes, set_bytes, blocks);
}

/* account(): the check above, called by the script while its data is
 * alive; the set and the title are the function's upvalues.  Returns
 * nothing. */
static int lua_account(lua_State *state)
{
	const pool_set_t *set = lua_touserdata(state, lua_upvalueindex(1));
	const char *what = lua_tostring(state, lua_upvalueindex(2));

	check_accounting(state, set, what);
	return 0;
}

static void run_script(lua_State *state, pool_set_t *set, const char *what,
                       const int64_t *expected)
{
	static const lua_Integer arguments[] = {
	    PARTS,    CONCATS, ARRAY,  ARRAY_MODULO, KEYS,
	    CLOSURES, CALLS,   YIELDS, TREE_DEPTH,   MIN_DEPTH,
	};
	const int count = (int)(sizeof(arguments) / sizeof(arguments[0]));

	lua_pushlightuserdata(state, set);
	lua_pushstring(state, what);
	lua_pushcclosure(state, lua_account, 2);
	lua_setglobal(state, "account");
	if (!test_check(luaL_loadstring(state, script) == LUA_OK,
	                "%s: the script does not load: %s", what,
	                lua_tostring(state, -1)))
		return;
	for (int i = 0; i < count; i++)
		lua_pushinteger(state, arguments[i]);
	if (!test_check(lua_pcall(state, count, RESULTS, 0) == LUA_OK,
	                "%s: the script failed: %s", what,
	                lua_tostring(state, -1)))
		return;
	int wrong = 0;
	for (int i = 0; i < RESULTS; i++) {
		int is_integer = 0;
		lua_Integer value =
		    lua_tointegerx(state, i - RESULTS, &is_integer);
		wrong +=
		    !test_check(is_integer && value == expected[i],
		                "%s: %s is %lld, expected %" PRId64, what,
		                result_names[i], (long long)value, expected[i]);
	}
	lua_pop(state, RESULTS);
	if (wrong == 0)
		printf("%s: strings, tables, closures, a coroutine and "
		       "binary-trees of depth %d gave the expected results\n",
		       what, TREE_DEPTH);
	lua_gc(state, LUA_GCCOLLECT, 0);
	check_accounting(state, set, what);
}

static void run_mode(int flags, const int64_t *expected)
{
	char what[64];
	pool_set_t *set =
	    pool_set_init(SET_MIN_BLOCK, SET_MAX_BLOCK, SET_CLASS_BYTES, flags);

	snprintf(what, sizeof(what), "lua %s", test_mode_name(flags));
	if (!test_check(set != NULL, "%s: pool_set_init failed", what))
		return;
	lua_State *state = lua_pool_newstate(set);
	if (test_check(state != NULL, "%s: lua_pool_newstate failed", what)) {
		run_script(state, set, what, expected);
		lua_close(state);
	}
	test_set_clean(set, what, 1000000, 0);
	pool_set_destroy(set);
}

/*
 * A shrink from a 1 KiB block to 10 bytes, while the 16 B class is
 * exhausted and the set has no fallback: lua_pool_alloc() must return the
 * bytes, in place or moved, never NULL.
 */
static void check_shrink(void)
{
	pool_set_t *set =
	    pool_set_init(16, 1024, 64 << 10, POOL_SINGLE | POOL_NO_FALLBACK);
	if (!test_check(set != NULL, "shrink: pool_set_init failed"))
		return;
	char *block = lua_pool_alloc(set, NULL, LUA_TSTRING, 1000);
	void *small[(64 << 10) / 16];
	size_t count = 0;
	while (count < sizeof(small) / sizeof(small[0]) &&
	       (small[count] = pool_set_malloc(set, 16)) != NULL)
		count++;
	if (test_check(block != NULL && count > 0 &&
	                   count < sizeof(small) / sizeof(small[0]),
	               "shrink: the 16 B class is not exhausted")) {
		memcpy(block, "shrink me", 10);
		char *shrunk = lua_pool_alloc(set, block, 1000, 10);
		test_check(shrunk != NULL &&
		               memcmp(shrunk, "shrink me", 10) == 0,
		           "shrink: a shrink failed or lost its bytes");
		if (shrunk != NULL)
			block = shrunk;
		printf("shrink: 1000 to 10 bytes with the 16 B class exhausted "
		       "%s\n",
		       shrunk == block ? "succeeded" : "failed");
	}
	lua_pool_alloc(set, block, 10, 0);
	for (size_t i = 0; i < count; i++)
		pool_set_free(set, small[i]);
	pool_set_destroy(set);
}

int main(void)
{
	int64_t expected[RESULTS];

	expect_results(expected);
	printf("%s\n", LUA_RELEASE);
	run_mode(POOL_SINGLE, expected);
	run_mode(POOL_LOCKED, expected);
	run_mode(POOL_PER_THREAD, expected);
	check_shrink();
	if (test_failures != 0) {
		printf("lua-pool-test: %u checks failed\n", test_failures);
		return 1;
	}
	printf("lua-pool-test: all checks passed\n");
	return 0;
}
