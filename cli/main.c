/* anvil command-line entry point (placeholder until the CLI lands). */
#include <stdio.h>
int main(void) { puts("anvil"); return 0; }
