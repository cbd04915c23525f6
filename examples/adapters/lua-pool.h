/*
 * examples/adapters/lua-pool: a Lua 5.4 state on a shiftpool set.
 *
 * Copy lua-pool.c and this header into a program that embeds Lua.
 * SPDX-License-Identifier: MIT
 */
#ifndef LUA_POOL_H
#define LUA_POOL_H

#include <lua.h>
#include <shiftpool.h>

/* The lua_Alloc of a state whose memory comes from the set ud. */
void *lua_pool_alloc(void *ud, void *ptr, size_t osize, size_t nsize);

/*
 * A new state on set, with the standard libraries open, as
 * luaL_newstate() and luaL_openlibs() make one; NULL when there is no
 * memory.  The set must outlive the state (lua_close() frees all its
 * memory) and its mode must allow the threads that use the state, one at
 * a time as Lua requires (POOL_SINGLE when one thread does).
 */
lua_State *lua_pool_newstate(pool_set_t *set);

#endif
