/*
 * examples/adapters/lua-pool: a Lua 5.4 state on a shiftpool set.
 *
 * Lua's allocation function is realloc with the old size given, where a
 * new size of 0 frees and a shrink must not fail: pool_set_realloc()
 * keeps a shrinking block where it is (or moves it without failing), so
 * the function is one call each way.
 *
 * SPDX-License-Identifier: MIT
 */
#include "lua-pool.h"

#include <lauxlib.h>
#include <lualib.h>
#include <stdio.h>

void *lua_pool_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
	/* With ptr NULL, osize says what kind of object Lua makes. */
	(void)osize;
	if (nsize == 0) {
		pool_set_free(ud, ptr);
		return NULL;
	}
	return pool_set_realloc(ud, ptr, nsize);
}

/* An error outside any protected call: say it, as luaL_newstate()'s
 * handler does, before Lua aborts. */
static int lua_pool_panic(lua_State *state)
{
	const char *message = lua_tostring(state, -1);
	fprintf(stderr, "PANIC: unprotected error in call to Lua API (%s)\n",
	        message != NULL ? message : "error object is not a string");
	return 0;
}

lua_State *lua_pool_newstate(pool_set_t *set)
{
	lua_State *state = lua_newstate(lua_pool_alloc, set);
	if (state == NULL)
		return NULL;
	lua_atpanic(state, lua_pool_panic);
	luaL_openlibs(state);
	return state;
}
