-- Generic plans for the money path (issue 5 point 12). A plpgsql statement with parameters
-- gets a custom plan, made for its values, on its first five runs; after that PostgreSQL keeps
-- planning it again on every run whenever the generic plan's estimate looks dearer, which it
-- does for the `= ANY (array)` lock, the wallet's rate subqueries and the transition-table
-- check of postings. Measured with pgbench on a 2-CPU machine, money_transfer() spent about a
-- fifth of its server CPU in the planner: 1 217 → 849 µs per call with 16 clients.
-- Every statement on this path looks rows up by a primary key or unique index, where the
-- generic plan is the right one whatever the values. The setting holds for the whole call,
-- so the functions these call and the triggers they fire plan generically too; it is set on
-- the functions the application calls, not on the ones they call.
ALTER FUNCTION session_find(bytea, integer) SET plan_cache_mode = force_generic_plan;
ALTER FUNCTION wallet_state(bigint) SET plan_cache_mode = force_generic_plan;
ALTER FUNCTION transfer_prepare(bigint, integer, text, numeric) SET plan_cache_mode = force_generic_plan;
ALTER FUNCTION money_transfer(bigint, text, text, integer, text, numeric, text) SET plan_cache_mode = force_generic_plan;
ALTER FUNCTION ledger_post(text, bigint[], numeric[], text, text, bigint) SET plan_cache_mode = force_generic_plan;
ALTER FUNCTION ledger_reverse(bigint, text, text) SET plan_cache_mode = force_generic_plan;
ALTER FUNCTION money_exchange(bigint, text, text, numeric, numeric, numeric, numeric, numeric, text, bigint, bigint, text) SET plan_cache_mode = force_generic_plan;
