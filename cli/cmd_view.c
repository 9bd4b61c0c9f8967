/* `locksim view`: the window (placeholder until gfx/view.c lands). */
#include "cli.h"

int cmd_view(int argc, char **argv) {
    (void)argc;
    (void)argv;
    return cli_fail(LSIM_ENODISPLAY, "view is not built yet; draw a picture with: locksim render FILE -o out.png");
}
