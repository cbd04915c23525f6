/*
 * examples/adapters/sqlite-pool-test: SQLite on a pool set, with a real
 * workload.
 *
 * In each thread-safe mode of the set (SQLite may use threads of its
 * own), sqlite_pool_install() hands SQLite a fresh set, and the program
 * builds the same database in memory and in a temporary file: two
 * tables, 100,000 inserted rows in transactions, two indexes, joins,
 * aggregates, a DISTINCT over the whole table, an update and a delete.
 * Every result is checked against the value computed here in C, and
 * PRAGMA integrity_check must say "ok".  After sqlite3_shutdown() the
 * set must have served SQLite's allocations and got every one of them
 * back; the one allocation made on purpose above the largest class is
 * the only one the fallback serves.  Exits 0, 1 on a failed check.
 *
 * SPDX-License-Identifier: MIT
 */
#define _POSIX_C_SOURCE 200809L /* mkstemp() */

#include "adapter-test.h"
#include "sqlite-pool.h"

#include <inttypes.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------ limits */

#define CUSTOMERS    1000
#define REGIONS      7
#define ORDERS       100000
#define TRANSACTION  10000 /* rows per transaction */
#define NOTE_KEYS    5000  /* a note is "n<key>" and a padding... */
#define NOTE_PADDING 97    /* ...of 0 to NOTE_PADDING - 1 dots */
#define LOW_AMOUNT   100   /* the rows below it are deleted */

/* The set: 16 B to 2 MiB, so that every allocation SQLite makes here has
 * a class (the largest is the sorter's memory for CREATE INDEX, which
 * grows by doubling up to the page cache's size, 2000 KiB by default),
 * each class with room for the in-memory database's pages. */
#define SET_MIN_BLOCK   16
#define SET_MAX_BLOCK   ((size_t)2 << 20)
#define SET_CLASS_BYTES ((size_t)64 << 20)

/* ------------------------------------------------------------ types */

/* What the rows hold, computed as they are made. */
struct expected {
	int64_t amount_sum;
	int64_t region_count[REGIONS];
	int64_t region_sum[REGIONS];
	int64_t customer_count[CUSTOMERS];
	int64_t amount_range_count; /* amount in 1000 .. 1999 */
	int64_t note_bytes;
	int64_t distinct_notes;
	int64_t updated_sum; /* after the update */
	int64_t kept_rows;   /* after the delete */
	int64_t kept_sum;
};

/* ------------------------------------------------------------ rows */

static uint32_t next_random(uint32_t *state)
{
	*state = *state * 1103515245u + 12345u;
	return *state >> 8;
}

/* The rows of orders, row i (from 0): its customer (from 1), amount and
 * the two parts of its note. */
struct order {
	int customer;
	int amount;
	int note_key;
	int note_padding;
};

static struct order order_row(int i, uint32_t *state)
{
	return (struct order){
	    .customer = (int)(next_random(state) % CUSTOMERS) + 1,
	    .amount = (int)(next_random(state) % 10000),
	    .note_key = (int)((uint64_t)i * 7919 % NOTE_KEYS),
	    .note_padding = i % NOTE_PADDING,
	};
}

static int region_of(int customer)
{
	return customer % REGIONS;
}

/* The note text of a row: "n<key>" and its padding. */
static int note_text(const struct order *row, char *text, size_t size)
{
	int length =
	    snprintf(text, size, "n%d%.*s", row->note_key, row->note_padding,
	             "........................................"
	             "........................................"
	             "........................................");
	return length;
}

static void expect_rows(struct expected *expected)
{
	static unsigned char seen[NOTE_KEYS][NOTE_PADDING];
	uint32_t state = 1;

	memset(expected, 0, sizeof(*expected));
	memset(seen, 0, sizeof(seen));
	for (int i = 0; i < ORDERS; i++) {
		struct order row = order_row(i, &state);
		char text[256];
		int region = region_of(row.customer);
		int updated = row.amount + (row.customer % 10 == 0);

		expected->amount_sum += row.amount;
		expected->region_count[region]++;
		expected->region_sum[region] += row.amount;
		expected->customer_count[row.customer - 1]++;
		if (row.amount >= 1000 && row.amount <= 1999)
			expected->amount_range_count++;
		expected->note_bytes += note_text(&row, text, sizeof(text));
		if (!seen[row.note_key][row.note_padding]) {
			seen[row.note_key][row.note_padding] = 1;
			expected->distinct_notes++;
		}
		expected->updated_sum += updated;
		if (updated >= LOW_AMOUNT) {
			expected->kept_rows++;
			expected->kept_sum += updated;
		}
	}
}

/* ------------------------------------------------------------ SQL */

static bool exec(sqlite3 *db, const char *what, const char *sql)
{
	char *error = NULL;
	int result = sqlite3_exec(db, sql, NULL, NULL, &error);
	bool ok = test_check(result == SQLITE_OK, "%s: %s: %s", what, sql,
	                     error != NULL ? error : sqlite3_errstr(result));
	sqlite3_free(error);
	return ok;
}

/* The integer in the first column of the one row sql returns, or
 * INT64_MIN (and a failed check) when there is none. */
static int64_t query_integer(sqlite3 *db, const char *what, const char *sql)
{
	sqlite3_stmt *statement;
	int64_t value = INT64_MIN;

	if (!test_check(sqlite3_prepare_v2(db, sql, -1, &statement, NULL) ==
	                    SQLITE_OK,
	                "%s: %s: %s", what, sql, sqlite3_errmsg(db)))
		return value;
	if (test_check(sqlite3_step(statement) == SQLITE_ROW,
	               "%s: %s: no row: %s", what, sql, sqlite3_errmsg(db)))
		value = sqlite3_column_int64(statement, 0);
	sqlite3_finalize(statement);
	return value;
}

static void check_integer(sqlite3 *db, const char *what, const char *sql,
                          int64_t expected)
{
	int64_t value = query_integer(db, what, sql);
	test_check(value == expected,
	           "%s: %s gave %" PRId64 ", expected %" PRId64, what, sql,
	           value, expected);
}

static bool create_tables(sqlite3 *db, const char *what)
{
	if (!exec(db, what,
	          "CREATE TABLE customer(id INTEGER PRIMARY KEY,"
	          " name TEXT NOT NULL, region INTEGER NOT NULL);"
	          "CREATE TABLE orders(id INTEGER PRIMARY KEY,"
	          " customer INTEGER NOT NULL REFERENCES customer(id),"
	          " amount INTEGER NOT NULL, note TEXT NOT NULL);"))
		return false;
	sqlite3_stmt *statement;
	if (!test_check(sqlite3_prepare_v2(db,
	                                   "INSERT INTO customer VALUES "
	                                   "(?, 'customer-' || ?, ?)",
	                                   -1, &statement, NULL) == SQLITE_OK,
	                "%s: prepare: %s", what, sqlite3_errmsg(db)))
		return false;
	bool ok = exec(db, what, "BEGIN");
	for (int id = 1; ok && id <= CUSTOMERS; id++) {
		sqlite3_bind_int(statement, 1, id);
		sqlite3_bind_int(statement, 2, id);
		sqlite3_bind_int(statement, 3, region_of(id));
		ok = test_check(sqlite3_step(statement) == SQLITE_DONE,
		                "%s: customer %d: %s", what, id,
		                sqlite3_errmsg(db));
		sqlite3_reset(statement);
	}
	sqlite3_finalize(statement);
	return ok && exec(db, what, "COMMIT");
}

static bool insert_orders(sqlite3 *db, const char *what)
{
	sqlite3_stmt *statement;
	uint32_t state = 1;

	if (!test_check(
	        sqlite3_prepare_v2(db,
	                           "INSERT INTO orders(customer, amount,"
	                           " note) VALUES (?, ?, ?)",
	                           -1, &statement, NULL) == SQLITE_OK,
	        "%s: prepare: %s", what, sqlite3_errmsg(db)))
		return false;
	bool ok = true;
	for (int i = 0; ok && i < ORDERS; i++) {
		if (i % TRANSACTION == 0)
			ok = exec(db, what, "BEGIN");
		struct order row = order_row(i, &state);
		char text[256];
		int length = note_text(&row, text, sizeof(text));
		sqlite3_bind_int(statement, 1, row.customer);
		sqlite3_bind_int(statement, 2, row.amount);
		sqlite3_bind_text(statement, 3, text, length, SQLITE_TRANSIENT);
		ok = ok && test_check(sqlite3_step(statement) == SQLITE_DONE,
		                      "%s: order %d: %s", what, i,
		                      sqlite3_errmsg(db));
		sqlite3_reset(statement);
		if (ok && (i + 1) % TRANSACTION == 0)
			ok = exec(db, what, "COMMIT");
	}
	sqlite3_finalize(statement);
	return ok;
}

/* The join: orders and their sums by the customers' region. */
static void check_regions(sqlite3 *db, const char *what,
                          const struct expected *expected)
{
	static const char sql[] =
	    "SELECT c.region, count(*), sum(o.amount) FROM orders o"
	    " JOIN customer c ON c.id = o.customer"
	    " GROUP BY c.region ORDER BY c.region";
	sqlite3_stmt *statement;
	int rows = 0;

	if (!test_check(sqlite3_prepare_v2(db, sql, -1, &statement, NULL) ==
	                    SQLITE_OK,
	                "%s: %s: %s", what, sql, sqlite3_errmsg(db)))
		return;
	while (sqlite3_step(statement) == SQLITE_ROW) {
		int region = sqlite3_column_int(statement, 0);
		int64_t count = sqlite3_column_int64(statement, 1);
		int64_t sum = sqlite3_column_int64(statement, 2);
		test_check(region == rows &&
		               count == expected->region_count[region] &&
		               sum == expected->region_sum[region],
		           "%s: region row %d: region %d, %" PRId64
		           " orders, sum %" PRId64,
		           what, rows, region, count, sum);
		rows++;
	}
	sqlite3_finalize(statement);
	test_check(rows == REGIONS, "%s: %d regions, expected %d", what, rows,
	           REGIONS);
}

/* The customer with the most orders (the lowest id among equals). */
static void check_busiest(sqlite3 *db, const char *what,
                          const struct expected *expected)
{
	int busiest = 0;
	for (int c = 1; c < CUSTOMERS; c++)
		if (expected->customer_count[c] >
		    expected->customer_count[busiest])
			busiest = c;
	check_integer(db, what,
	              "SELECT customer FROM orders GROUP BY customer"
	              " ORDER BY count(*) DESC, customer LIMIT 1",
	              busiest + 1);
	check_integer(db, what,
	              "SELECT count(*) FROM orders o JOIN customer c"
	              " ON c.id = o.customer WHERE c.name = 'customer-' ||"
	              " (SELECT customer FROM orders GROUP BY customer"
	              " ORDER BY count(*) DESC, customer LIMIT 1)",
	              expected->customer_count[busiest]);
}

/* The names of one region's customers, concatenated: their length. */
static int64_t expected_names_length(int region)
{
	int64_t length = -1; /* no comma before the first */
	for (int id = 1; id <= CUSTOMERS; id++) {
		if (region_of(id) != region)
			continue;
		char name[32];
		length += snprintf(name, sizeof(name), "customer-%d", id) + 1;
	}
	return length;
}

static void run_database(const char *filename, const char *what,
                         const struct expected *expected)
{
	sqlite3 *db = NULL;

	if (!test_check(sqlite3_open(filename, &db) == SQLITE_OK,
	                "%s: sqlite3_open: %s", what,
	                db != NULL ? sqlite3_errmsg(db) : "no memory")) {
		sqlite3_close(db);
		return;
	}
	if (!create_tables(db, what) || !insert_orders(db, what))
		goto out;
	if (!exec(db, what,
	          "CREATE INDEX orders_customer ON orders(customer);"
	          "CREATE INDEX orders_amount ON orders(amount);"
	          "CREATE INDEX customer_region ON customer(region);"))
		goto out;

	check_integer(db, what, "SELECT count(*) FROM orders", ORDERS);
	check_integer(db, what, "SELECT sum(amount) FROM orders",
	              expected->amount_sum);
	check_regions(db, what, expected);
	check_busiest(db, what, expected);
	check_integer(db, what,
	              "SELECT count(*) FROM orders"
	              " WHERE amount BETWEEN 1000 AND 1999",
	              expected->amount_range_count);
	check_integer(db, what, "SELECT sum(length(note)) FROM orders",
	              expected->note_bytes);
	check_integer(db, what, "SELECT count(DISTINCT note) FROM orders",
	              expected->distinct_notes);
	check_integer(db, what,
	              "SELECT length(group_concat(name, ',')) FROM"
	              " (SELECT name FROM customer WHERE region = 3"
	              " ORDER BY id)",
	              expected_names_length(3));

	if (!exec(db, what,
	          "BEGIN;"
	          "UPDATE orders SET amount = amount + 1"
	          " WHERE customer % 10 = 0;"
	          "COMMIT;"))
		goto out;
	check_integer(db, what, "SELECT sum(amount) FROM orders",
	              expected->updated_sum);
	if (!exec(db, what, "DELETE FROM orders WHERE amount < 100"))
		goto out;
	check_integer(db, what, "SELECT count(*) FROM orders",
	              expected->kept_rows);
	check_integer(db, what,
	              "SELECT sum(amount) FROM orders INDEXED BY orders_amount"
	              " WHERE amount >= 0",
	              expected->kept_sum);

	sqlite3_stmt *statement;
	if (test_check(sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1,
	                                  &statement, NULL) == SQLITE_OK,
	               "%s: integrity_check: %s", what, sqlite3_errmsg(db))) {
		const char *answer = NULL;
		if (sqlite3_step(statement) == SQLITE_ROW)
			answer =
			    (const char *)sqlite3_column_text(statement, 0);
		test_check(answer != NULL && strcmp(answer, "ok") == 0,
		           "%s: integrity_check: %s", what,
		           answer != NULL ? answer : sqlite3_errmsg(db));
		sqlite3_finalize(statement);
	}
	printf("%s: %d rows inserted, indexed, joined, updated and checked;"
	       " %" PRId64 " kept\n",
	       what, ORDERS, expected->kept_rows);
out:
	test_check(sqlite3_close(db) == SQLITE_OK, "%s: sqlite3_close: %s",
	           what, sqlite3_errmsg(db));
}

/* ------------------------------------------------------------ sizes */

/*
 * What SQLite is told about its allocations: the class's block size, from
 * xRoundup before it allocates and xSize after, with no header (a request
 * of a class's exact size stays in that class); above the largest class,
 * the fallback's own size.  Returns the fallback allocations it made.
 */
static unsigned check_sizes(pool_set_t *set, const char *what)
{
	static const struct {
		int request;
		int usable;
	} sizes[] = {{1, 16}, {100, 128}, {4096, 4096}, {4097, 8192}};

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		void *block = sqlite3_malloc(sizes[i].request);
		if (!test_check(block != NULL, "%s: sqlite3_malloc(%d) failed",
		                what, sizes[i].request))
			continue;
		test_check(
		    sqlite3_msize(block) == (sqlite3_uint64)sizes[i].usable &&
		        pool_set_owns(set, block),
		    "%s: sqlite3_malloc(%d): %llu usable bytes, owned %d", what,
		    sizes[i].request, (unsigned long long)sqlite3_msize(block),
		    pool_set_owns(set, block));
		sqlite3_free(block);
	}
	int large = (int)SET_MAX_BLOCK + 1;
	void *block = sqlite3_malloc(large);
	if (!test_check(block != NULL, "%s: sqlite3_malloc(%d) failed", what,
	                large))
		return 0;
	test_check(sqlite3_msize(block) >= (sqlite3_uint64)large &&
	               !pool_set_owns(set, block),
	           "%s: sqlite3_malloc(%d) above the classes: %llu usable "
	           "bytes, owned %d",
	           what, large, (unsigned long long)sqlite3_msize(block),
	           pool_set_owns(set, block));
	sqlite3_free(block);
	return 1;
}

/* ------------------------------------------------------------ main */

static void run_mode(int flags, const char *file,
                     const struct expected *expected)
{
	char what[64];
	pool_set_t *set =
	    pool_set_init(SET_MIN_BLOCK, SET_MAX_BLOCK, SET_CLASS_BYTES, flags);

	snprintf(what, sizeof(what), "sqlite %s", test_mode_name(flags));
	if (!test_check(set != NULL, "%s: pool_set_init failed", what))
		return;
	if (!test_check(sqlite_pool_install(set) == SQLITE_OK,
	                "%s: sqlite_pool_install failed", what)) {
		pool_set_destroy(set);
		return;
	}
	unsigned fallbacks = check_sizes(set, what);
	char title[96];
	snprintf(title, sizeof(title), "%s, in memory", what);
	run_database(":memory:", title, expected);
	snprintf(title, sizeof(title), "%s, in a file", what);
	if (truncate(file, 0) == 0)
		run_database(file, title, expected);
	else
		test_check(false, "%s: cannot empty %s", title, file);
	printf("%s: SQLite's peak of memory used: %lld bytes\n", what,
	       (long long)sqlite3_memory_highwater(1));
	test_check(sqlite3_shutdown() == SQLITE_OK, "%s: sqlite3_shutdown",
	           what);
	test_set_clean(set, what, 2 * ORDERS, fallbacks);
	pool_set_destroy(set);
}

int main(void)
{
	static struct expected expected;
	const char *directory = getenv("TMPDIR");
	char file[4096];

	expect_rows(&expected);
	snprintf(file, sizeof(file), "%s/sqlite-pool-XXXXXX",
	         directory != NULL && directory[0] != '\0' ? directory
	                                                   : "/tmp");
	int fd = mkstemp(file);
	if (fd < 0) {
		perror("sqlite-pool-test: mkstemp");
		return 1;
	}
	close(fd);
	printf("SQLite %s\n", sqlite3_libversion());
	run_mode(POOL_LOCKED, file, &expected);
	run_mode(POOL_PER_THREAD, file, &expected);
	unlink(file);
	/* A rollback journal left behind by a failed run goes too. */
	char journal[4200];
	snprintf(journal, sizeof(journal), "%s-journal", file);
	unlink(journal);
	if (test_failures != 0) {
		printf("sqlite-pool-test: %u checks failed\n", test_failures);
		return 1;
	}
	printf("sqlite-pool-test: all checks passed\n");
	return 0;
}
