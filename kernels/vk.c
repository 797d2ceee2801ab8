/* vk.c — Vulkan bring-up. */
#define VK_COMMANDS
