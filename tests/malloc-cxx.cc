// C++ under libshiftpool-malloc.so (tests/malloc-programs.sh builds it with
// the C++ compiler and compares its output on the C library's allocator
// and preloaded): operator new and delete, the containers, strings and
// shared pointers all reach malloc() and free(); over-aligned types reach
// aligned_alloc() through the aligned operator new.  Prints values that
// depend only on the computation, never on addresses.
//
// SPDX-License-Identifier: MIT
#include <cstdint>
#include <cstdio>
#include <list>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

struct alignas(64) Line {
	std::uint64_t words[8];
};

struct alignas(8192) Page {
	unsigned char bytes[8192];
};

int main()
{
	std::uint64_t sum = 0;
	int misaligned = 0;
	for (int round = 0; round < 20; round++) {
		std::map<std::string, std::vector<int>> words;
		std::unordered_map<int, std::string> names;
		std::list<std::shared_ptr<std::string>> shared;
		for (int i = 0; i < 5000; i++) {
			std::string key =
			    "key-" + std::to_string(i * 7919 % 1000);
			words[key].push_back(i);
			names[i] =
			    std::string(static_cast<std::size_t>(i % 300), 'x');
			shared.push_back(
			    std::make_shared<std::string>(key + key));
		}
		for (const auto &entry : words)
			for (int v : entry.second)
				sum += static_cast<std::uint64_t>(v) *
				       entry.first.size();
		for (const auto &entry : names)
			sum += entry.second.size();
		for (const auto &s : shared)
			sum += s->size();

		std::vector<Line *> lines;
		for (int i = 0; i < 300; i++) {
			lines.push_back(new Line());
			if (reinterpret_cast<std::uintptr_t>(lines.back()) % 64)
				misaligned++;
			lines.back()->words[i % 8] =
			    static_cast<std::uint64_t>(i);
		}
		for (Line *line : lines) {
			for (std::uint64_t w : line->words)
				sum += w;
			delete line;
		}
		Page *page = new Page();
		if (reinterpret_cast<std::uintptr_t>(page) % 8192)
			misaligned++;
		page->bytes[8191] = 1;
		sum += page->bytes[8191];
		delete page;

		int *array = new int[10000]();
		for (int i = 0; i < 10000; i++)
			array[i] = i;
		for (int i = 0; i < 10000; i++)
			sum += static_cast<std::uint64_t>(array[i]);
		delete[] array;
	}
	std::printf("malloc-cxx: sum %llu, misaligned %d\n",
	            static_cast<unsigned long long>(sum), misaligned);
	return misaligned == 0 ? 0 : 1;
}
