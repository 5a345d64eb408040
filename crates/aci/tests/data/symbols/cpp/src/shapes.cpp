#include "shapes.hpp"

#include <cmath>
#include <stdexcept>

namespace geo {

Shape::Shape(std::string name) : name_(std::move(name)) {}

double Point::dist(const Point& other) const
{
    return std::sqrt(SQUARE(x - other.x) + SQUARE(y - other.y));
}

Circle::Circle(Point centre, double radius)
    : Shape("circle"), centre_(centre), radius_(radius)
{
}

double Circle::area() const
{
    return M_PI * radius_ * radius_;
}

}  // namespace geo

geo::Rect::Rect(geo::Point min, geo::Point max) : geo::Shape("rect"), min_(min), max_(max) {}

double geo::Rect::area() const
{
    return (max_.x - min_.x) * (max_.y - min_.y);
}

geo::Unit parse_unit(const std::string& text)
{
    if (text == "m") {
        return geo::Unit::Metre;
    }
    if (text == "mm") {
        return geo::Unit::Millimetre;
    }
    throw std::invalid_argument("parse_unit: unknown unit " + text);
}
