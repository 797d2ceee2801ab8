/* vk.h — Vulkan bring-up (dlopen), device, memory, pipelines, dispatch. */
#ifndef EDGE_VK_H
#define EDGE_VK_H
#endif
