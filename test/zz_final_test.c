/* zz_final_test.c — runs last (included last): whole-suite checks. */

TEST(vulkan_validation_reported_no_errors) {
    if (!getenv("EDGE_VALIDATION")) SKIP("EDGE_VALIDATION is not set (CI sets it)");
    if (tvk_state != 1) SKIP("no Vulkan device");
    CHECKF(vk_validation_errors() == 0, "%u validation errors (see stderr)", vk_validation_errors());
}
