/* Offload plugins that misbehave on purpose, one per build (tests/offload/CMakeLists.txt):
 * TEST_PLUGIN_DECLINE declines every communicator, TEST_PLUGIN_BAD_ABI claims ABI version 99,
 * TEST_PLUGIN_INIT_FAILS fails its init. weft must fall back (logged) or, under
 * WEFT_OFFLOAD=require, fail clearly. */
#include <stddef.h>

#include "weft/offload.h"

static int decline_init(const struct weft_offload_node_info *node, weft_offload_log_fn log, void **plugin)
{
    (void)node;
#ifdef TEST_PLUGIN_INIT_FAILS
    log(WEFT_OFFLOAD_LOG_ERROR, "test plugin: init fails on purpose");
    *plugin = NULL;
    return WEFT_OFFLOAD_ERR_NETWORK;
#else
    log(WEFT_OFFLOAD_LOG_INFO, "test plugin: initialised (declines every communicator)");
    static int state;
    *plugin = &state;
    return WEFT_OFFLOAD_OK;
#endif
}

static int decline_setup(void *plugin, const struct weft_offload_comm_info *info, void **comm)
{
    (void)plugin;
    (void)info;
    *comm = NULL;
    return WEFT_OFFLOAD_DECLINED;
}

static int no_query(void *comm, struct weft_offload_caps *caps)
{
    (void)comm;
    (void)caps;
    return WEFT_OFFLOAD_ERR_UNSUPPORTED;
}

static int no_post(void *comm, const struct weft_offload_op_args *args, void **op)
{
    (void)comm;
    (void)args;
    (void)op;
    return WEFT_OFFLOAD_ERR_UNSUPPORTED;
}

static int no_test(void *comm, void *op, int *done)
{
    (void)comm;
    (void)op;
    *done = 0;
    return WEFT_OFFLOAD_ERR_UNSUPPORTED;
}

static void no_teardown(void *comm) { (void)comm; }
static void no_finalize(void *plugin) { (void)plugin; }
static const char *no_error(void *plugin, void *comm)
{
    (void)plugin;
    (void)comm;
    return "the test plugin does nothing";
}

static const struct weft_offload_plugin table = {
#ifdef TEST_PLUGIN_BAD_ABI
    99,
#else
    WEFT_OFFLOAD_ABI_VERSION,
#endif
    sizeof(struct weft_offload_plugin), "test", decline_init, decline_setup, no_query, no_post, no_test, NULL, NULL,
    no_teardown, no_finalize, no_error};

__attribute__((visibility("default"))) const struct weft_offload_plugin *weft_offload_plugin_v1(void) { return &table; }
